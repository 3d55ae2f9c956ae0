"""The intra-package import contracts hold, and break when a cycle is added (a negative control).

`lint-imports` runs over a copy of the package with the project's own contracts, once as it is
and once with `providers/base.py` (the lowest layer of providers) importing the registry (the
highest): that closes a cycle, and the providers contract must name it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import ioh_tui

pytestmark = pytest.mark.slow  # three runs of lint-imports over a copy: about 7 s

ROOT = Path(__file__).resolve().parent.parent
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")
PROVIDERS_CONTRACT = "Providers: registry over providers over the wire client over its pieces"


def lint_copy(tmp_path: Path, cycle: str | None = None) -> subprocess.CompletedProcess[str]:
    """Copy the package and its contracts to `tmp_path` and lint the copy."""
    source = Path(ioh_tui.__file__).parent
    shutil.copytree(source, tmp_path / "ioh_tui", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    if cycle is not None:
        with (tmp_path / "ioh_tui" / "providers" / "base.py").open("a") as base:
            base.write(f"\n{cycle}\n")
    # The copy comes first on the path, ahead of the editable install of the checkout.
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    return subprocess.run(
        [str(LINT_IMPORTS), "--config", "pyproject.toml", "--no-cache"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_copy_keeps_every_contract(tmp_path: Path) -> None:
    done = lint_copy(tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{PROVIDERS_CONTRACT} KEPT" in " ".join(done.stdout.split())


@pytest.mark.parametrize(
    "cycle",
    [
        "import ioh_tui.providers.registry",
        # A function-local import is a cycle too: it only moves the failure to run time.
        "def _late() -> None:\n    from ioh_tui.providers import registry  # noqa: F401",
    ],
    ids=["top-level", "function-local"],
)
def test_an_added_cycle_breaks_the_providers_contract(tmp_path: Path, cycle: str) -> None:
    done = lint_copy(tmp_path, cycle)
    output = " ".join(done.stdout.split())
    assert done.returncode != 0, output
    assert f"{PROVIDERS_CONTRACT} BROKEN" in output
    assert "ioh_tui.providers.base -> ioh_tui.providers.registry" in output

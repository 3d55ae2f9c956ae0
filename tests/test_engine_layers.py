"""The engine's layers contract holds on the package and breaks on a deliberately added cycle.

The contract is read from `pyproject.toml` (the one `lint-imports` checks), run against a copy of
the package in a temporary directory, once as it is and once with a lower module importing the
entry module: that import closes a cycle, and the contract must report it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def _engine_contract() -> dict[str, Any]:
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    found = [c for c in contracts if c.get("containers") == ["ioh_tui.engine"]]
    assert len(found) == 1, "pyproject.toml has exactly one contract over the engine's modules"
    return dict(found[0])


def _lint(tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """Run lint-imports over the copy in `tmp_path` with the engine contract only."""
    contract = _engine_contract()
    # TOML strings and lists of strings are written exactly as JSON writes them.
    lines = [
        "[tool.importlinter]",
        'root_package = "ioh_tui"',
        "",
        "[[tool.importlinter.contracts]]",
    ]
    lines += [f"{key} = {json.dumps(value)}" for key, value in contract.items()]
    config = tmp_path / "layers.toml"
    config.write_text("\n".join(lines) + "\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    return subprocess.run(
        [str(LINT_IMPORTS), "--config", str(config), "--no-cache"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def package_copy(tmp_path: Path) -> Path:
    """A copy of the `ioh_tui` package that `PYTHONPATH` puts before the installed one."""
    shutil.copytree(
        REPO / "ioh_tui", tmp_path / "ioh_tui", ignore=shutil.ignore_patterns("__pycache__")
    )
    return tmp_path


def test_the_engine_layers_hold_on_the_package_as_it_is(package_copy: Path) -> None:
    done = _lint(package_copy)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Contracts: 1 kept, 0 broken." in done.stdout


def test_a_lower_module_importing_the_entry_breaks_the_engine_layers(package_copy: Path) -> None:
    state = package_copy / "ioh_tui" / "engine" / "state.py"
    source = state.read_text(encoding="utf-8")
    # After the docstring and `from __future__`, like any other import of the module.
    head, tail = source.split("from __future__ import annotations\n", 1)
    state.write_text(
        f"{head}from __future__ import annotations\n\nimport ioh_tui.engine.api\n{tail}",
        encoding="utf-8",
    )
    done = _lint(package_copy)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "BROKEN" in done.stdout
    assert "ioh_tui.engine.state -> ioh_tui.engine.api" in done.stdout


def test_a_function_local_import_counts_too(package_copy: Path) -> None:
    tree = package_copy / "ioh_tui" / "engine" / "tree.py"
    source = tree.read_text(encoding="utf-8")
    tree.write_text(
        source + "\n\ndef _late() -> None:\n    from ioh_tui.engine import api  # noqa: F401\n",
        encoding="utf-8",
    )
    done = _lint(package_copy)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "ioh_tui.engine.tree -> ioh_tui.engine.api" in done.stdout

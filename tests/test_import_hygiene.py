"""The engine and everything headless never import Textual (checked in a fresh interpreter).

Rich is not checked at run time: httpx 0.28 imports it for its own command line whenever it is
installed (and Textual installs it). import-linter still forbids our headless code importing Rich.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

HEADLESS = [
    "ioh_tui",
    "ioh_tui.engine",
    "ioh_tui.core.events",
    "ioh_tui.providers",
    "ioh_tui.providers.registry",
    "ioh_tui.policy",
    "ioh_tui.sandbox",
    "ioh_tui.store",
    "ioh_tui.tools",
    "ioh_tui.verification",
    "ioh_tui.demo",
    "ioh_tui.cli",
    "ioh_tui.cli.headless",
    "ioh_tui.services",
    "ioh_tui.toolchain",
]


@pytest.mark.parametrize("module", HEADLESS)
def test_headless_module_does_not_load_textual(module: str) -> None:
    code = (
        f"import sys, {module}; "
        "print([m for m in sys.modules if m == 'textual' or m.startswith('textual.')])"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_the_check_can_fail() -> None:
    """A negative control: importing Textual is seen."""
    code = "import sys, textual; print('textual' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "True"

"""Factory-built apps for the snapshots: the calc project, a scripted model, a fixed clock."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ioh_tui.policy import Policy
from ioh_tui.tui.app import IohApp
from tests.tui.harness import FIX_CALC, READ_CALC, USAGE, build

SLOW_TESTS = (
    "import time\n"
    "print('collecting 3 tests', flush=True)\n"
    "print('test_add ... ', flush=True)\n"
    "time.sleep(60)\n"
)
"""A test run that prints, then hangs: the running view shows its live tail."""

INTRO = {
    "text": "Let me look at `calc.py` first, then run the **tests**.",
    "tool_calls": [READ_CALC],
    "usage": USAGE,
}
THINK_AND_FIX = {
    "thinking": "`add` subtracts: the sign is wrong.",
    "text": "The bug is the operator in `add`. Fixing it:",
    "tool_calls": [FIX_CALC],
    "usage": USAGE,
}
RUN_TESTS = {
    "text": "Running the project's tests while I think.",
    "tool_calls": [{"name": "exec", "arguments": {"argv": ["python3", "-B", "slow_tests.py"]}}],
    "usage": USAGE,
}
DONE = {"text": "Fixed: `add` now adds, and the check passes.", "usage": USAGE}


def calc_app(tmp_path: Path, *turns: dict[str, Any]) -> IohApp:
    """The calc project's app; `python3` commands are allowed so only writes ask."""
    policy = Policy.default().layer("project").allow_exec("python3", "python3 *")
    app = build(tmp_path, *turns, policy=policy, max_steps=8, token_budget=4000)
    (tmp_path / "project" / "slow_tests.py").write_text(SLOW_TESTS)
    return app


def running_app(tmp_path: Path) -> IohApp:
    """Mid-run: a read, a failed gate, then a command streaming output."""
    return calc_app(tmp_path, INTRO, RUN_TESTS)


def fixing_app(tmp_path: Path) -> IohApp:
    """A run that asks to write the fix, then finishes."""
    return calc_app(tmp_path, INTRO, THINK_AND_FIX, DONE)

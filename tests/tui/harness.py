"""Shared parts of the app tests and snapshots: a calc project, scripted runs, waiting helpers."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from ioh_tui.engine import NewRun, TaskContract
from ioh_tui.policy import Policy
from ioh_tui.providers import ScriptedProvider
from ioh_tui.providers.testing.scenario import parse_scenario
from ioh_tui.sandbox import select
from ioh_tui.tui.app import IohApp
from ioh_tui.tui.app_run import AppRun
from ioh_tui.tui.factory import make_app
from ioh_tui.tui.notify import Style
from ioh_tui.tui.screens.approval import ApprovalModal
from ioh_tui.tui.screens.run import RunScreen
from ioh_tui.verification import Command, Criterion

FIXED_NOW = 1_000.0


def fixed_clock() -> float:
    """A clock that never moves: the elapsed meter reads 0:00 in every picture."""
    return FIXED_NOW


CHECK = Command(["python3", "-B", "check_calc.py"])
"""The calc project's check; `-B` so a stale .pyc (same size, same second) can never be read."""

READ_CALC = {"name": "read_file", "arguments": {"path": "calc.py"}}
FIX_CALC = {
    "name": "edit_file",
    "arguments": {"path": "calc.py", "old_text": "a - b", "new_text": "a + b"},
}
FIXED = "def add(a, b):\n    return a + b\n"
USAGE = {"input_tokens": 900, "output_tokens": 60}
"""Fixed usage per turn, so token meters do not depend on the temporary path's length."""


def calc_project(root: Path) -> Path:
    """A tiny project whose check fails until `add` adds."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (root / "check_calc.py").write_text(
        "import calc\n\nassert calc.add(2, 3) == 5, 'add is wrong'\nprint('add works')\n"
    )
    (root / "README.md").write_text("# calc\n\nA calculator.\n")
    return root


def scripted(*turns: dict[str, Any]) -> ScriptedProvider:
    """A scripted model playing these turns."""
    return ScriptedProvider(parse_scenario({"model": "test-model", "turns": list(turns)}))


class Terminal:
    """A terminal that keeps every escape sequence the app writes to it, in order."""

    def __init__(self) -> None:
        self.written: list[str] = []

    def write(self, sequence: str) -> None:
        """Keep one sequence."""
        self.written.append(sequence)


def build(
    tmp_path: Path,
    *turns: dict[str, Any],
    provider: Any = None,
    policy: Policy | None = None,
    criterion: Criterion | None = CHECK,
    max_steps: int | None = None,
    token_budget: int | None = None,
    context_window: int | None = None,
    max_retries: int | None = None,
    clock: Callable[[], float] = fixed_clock,
    terminal: Terminal | None = None,
    notify: Style | None = None,
) -> IohApp:
    """The app over a scripted run of the calc project, built by the CLI's factory."""
    project = calc_project(tmp_path / "project")
    contract = TaskContract.workspace("make add add", project, criterion)
    if max_steps is not None:
        contract = contract.with_max_steps(max_steps)
    if token_budget is not None:
        contract = contract.with_token_budget(token_budget)
    if context_window is not None:
        contract = contract.with_context_window(context_window)
    if max_retries is not None:
        contract = contract.with_max_retries(max_retries)
    run = AppRun(
        NewRun(contract),
        provider or scripted(*turns),
        policy,
        select("floor"),
        label="scripted test model",
    )
    app = make_app(
        tmp_path / "store.db",
        run,
        clock=clock,
        remember_file=tmp_path / "remembered.toml",
        terminal=terminal,
        notify=notify,
    )
    app.animation_level = "none"
    return app


def run_screen(app: IohApp) -> RunScreen:
    """The app's run view."""
    assert app.run_screen is not None
    return app.run_screen


async def until(pilot: Pilot[Any], predicate: Callable[[], bool], within: float = 30.0) -> None:
    """Let the app work until `predicate` holds (real subprocesses; two test workers share CPUs)."""
    deadline = asyncio.get_running_loop().time() + within
    while not predicate():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("the app did not reach the expected state in time")
        await pilot.pause(0.02)


async def modal(pilot: Pilot[Any]) -> ApprovalModal:
    """Wait for the decision modal and return it."""
    await until(pilot, lambda: isinstance(pilot.app.screen, ApprovalModal))
    screen = pilot.app.screen
    assert isinstance(screen, ApprovalModal)
    await pilot.pause()
    return screen


async def finished(pilot: Pilot[Any]) -> None:
    """Wait until the run's worker has returned and the screen has drained its events.

    The outcome is set inside the frame that shows `run_finished`: the frame's last blocks are
    mounted after it, so the screen must also have settled.
    """
    await pilot.app.workers.wait_for_complete()
    app = pilot.app
    assert isinstance(app, IohApp)
    await until(
        pilot,
        lambda: (
            (run_screen(app).outcome is not None and run_screen(app).settled)
            or app.supervisor.error is not None
        ),
    )
    await pilot.pause()


def notifications(app: IohApp, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every notification the app shows from now on (toasts from any screen go through it)."""
    seen: list[str] = []
    original = app.notify

    def record(message: str, **kwargs: Any) -> None:
        seen.append(message)
        original(message, **kwargs)

    monkeypatch.setattr(app, "notify", record)
    return seen

"""The run's supervision and the terminal's signals, without an app (neither imports Textual)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from ioh_tui.core.errors import ConfigError
from ioh_tui.engine import NewRun, RunResult, TaskContract
from ioh_tui.policy import DenyAll
from ioh_tui.sandbox import select
from ioh_tui.tui.app_run import AppRun, RunContext, given
from ioh_tui.tui.notify import BELL, TerminalSignals, sequence, title_sequence
from ioh_tui.tui.supervisor import RunSupervisor
from tests.tui.fakes import GatedProvider
from tests.tui.harness import Terminal, calc_project


def test_without_a_run_there_is_nothing_to_stop_or_raise(tmp_path: Path) -> None:
    supervisor = RunSupervisor(tmp_path / "store.db")
    assert not supervisor.running and supervisor.exit_status == 0
    assert supervisor.stop("no reason") is False
    assert supervisor.raise_budget("max_steps", 9) is False
    supervisor.error = ConfigError("bad")
    assert supervisor.exit_status == 2
    supervisor.error = RuntimeError("crash")
    assert supervisor.exit_status == 1


async def test_a_run_is_told_its_context_raised_then_stopped_cancelled(tmp_path: Path) -> None:
    provider = GatedProvider(["Thinking it over."])
    project = calc_project(tmp_path / "project")
    run = AppRun(
        NewRun(TaskContract.workspace("make add add", project)),
        provider,
        sandbox=select("floor"),
        label="gated",
    )
    supervisor = RunSupervisor(tmp_path / "store.db")
    told: list[RunContext] = []
    work = supervisor.begin(
        given(run), observer=lambda _: None, approver=DenyAll(), tell=told.append
    )
    waiting = asyncio.ensure_future(work)
    for _ in range(1500):  # the engine opens the store and starts the step (15 s at most)
        if provider.waiting:
            break
        await asyncio.sleep(0.01)
    assert supervisor.running and told == [RunContext("make add add", project, None, "gated")]
    assert supervisor.raise_budget("max_steps", 9) is True
    with pytest.raises(ConfigError):
        supervisor.raise_budget("max_steps", -1)
    assert supervisor.stop("stopped in a test") is True
    result: RunResult = await waiting
    assert result.outcome == "cancelled" and not supervisor.running


def test_each_signal_is_one_sequence_written_through_the_writer() -> None:
    terminal = Terminal()
    signals = TerminalSignals(terminal, notify="osc9")
    signals.not_waiting(running=True)  # nothing waited: the title stays
    signals.waiting("write calc.py")
    signals.not_waiting(running=False)
    assert terminal.written == [
        BELL,
        title_sequence("ioh-tui — waiting on you: write calc.py"),
        sequence("osc9", "ioh-tui: waiting on you", "write calc.py"),
        title_sequence("ioh-tui"),
    ]
    signals.set_title("ioh-tui — \x1b]2;owned\x07")
    assert "\x1b]2;owned" not in terminal.written[-1].removeprefix("\x1b]2;")

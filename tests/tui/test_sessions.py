"""Every session at a glance: the start screen lists the runs of every process on the store.

A real `ioh-tui exec --on-approval wait` process drives one run on the store; the app (Pilot) is
another process's view of it, following the store as that process writes it.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable

from ioh_tui.engine import TaskContract, run
from ioh_tui.policy import ApproveAll, DeferAll
from ioh_tui.sandbox import select
from ioh_tui.store import Store
from ioh_tui.tui.factory import make_app
from ioh_tui.tui.screens.runs import LiveTraceScreen
from ioh_tui.tui.screens.start import StartScreen
from ioh_tui.tui.store_watch import StoreWatch
from tests.integration.cli.test_waiting_runs import WaitingExec
from tests.tui.harness import CHECK, FIX_CALC, FIXED, USAGE, calc_project, modal, scripted, until


async def _other_sessions(db: Path, tmp_path: Path) -> None:
    """On the store: a done run, a paused one, and one this process holds (running, no ask)."""
    async with Store.open(db) as store:
        for goal, approver in (("done already", ApproveAll()), ("paused here", DeferAll())):
            await run(
                TaskContract.workspace(
                    goal, calc_project(tmp_path / goal.replace(" ", "-")), CHECK
                ),
                scripted({"tool_calls": [FIX_CALC], "usage": USAGE}, {"text": "Fixed."}),
                store=store,
                approver=approver,
                sandbox=select("floor"),
            )
        going = await store.start_run(
            goal="going quietly",
            mode="workspace",
            root=str(tmp_path),
            subject=None,
            contract={},
            provider="scripted",
            model=None,
            sandbox="floor",
        )
        await store.acquire_lease(going, f"{os.getpid()}-{time.time_ns()}-1", 600.0)


@pytest.fixture
def waiting(project: Path, tmp_path: Path) -> Iterator[WaitingExec]:
    live = WaitingExec(project, tmp_path)
    yield live
    live.close()


def _states(start: StartScreen) -> list[tuple[str, str]]:
    return [(run.goal, state) for run, state in start.runs]


@pytest.mark.slow
async def test_runs_of_every_process_waiting_first_answered_and_followed_as_they_change(
    project: Path, tmp_path: Path
) -> None:
    db = tmp_path / "store.db"
    await _other_sessions(db, tmp_path)
    waiting = WaitingExec(project, tmp_path)  # a real process, on the same store
    try:
        waiting.until("approval_requested")
        app = make_app(db)
        app.animation_level = "none"
        async with app.run_test(size=(140, 40)) as pilot:
            start = app.screen
            assert isinstance(start, StartScreen)
            await until(pilot, lambda: len(start.runs) == 4)
            assert _states(start) == [
                ("make add add", "waiting on you (1)"),
                ("going quietly", "running"),
                ("paused here", "awaiting_approval"),
                ("done already", "success"),
            ]
            # Its decision, answered from the start screen, goes through the store.
            (row,) = [i for i, ask in enumerate(start.asks) if ask.root_driven]
            start.query_one("#start-pending", DataTable).move_cursor(row=row)
            await pilot.press("enter")
            await modal(pilot)
            await pilot.press("y")
            await app.workers.wait_for_complete()  # the answer is in the store
            status, last = waiting.finish()
            # Nothing pressed: the list follows the store the other process wrote.
            await until(pilot, lambda: ("make add add", "success") in _states(start))
            assert _states(start)[-2:] == [("make add add", "success"), ("done already", "success")]
    finally:
        waiting.close()
    assert (status, last["outcome"]) == (0, "success")
    assert (project / "calc.py").read_text() == FIXED


async def live_trace(pilot: Pilot[Any]) -> LiveTraceScreen:
    """From the start screen, the live trace of the first run listed (another process's)."""
    app = pilot.app
    start = app.screen
    assert isinstance(start, StartScreen)
    await until(pilot, lambda: bool(start.runs))
    start.query_one("#start-runs", DataTable).focus()
    await pilot.press("enter")
    await until(pilot, lambda: isinstance(app.screen, LiveTraceScreen))
    trace = app.screen
    assert isinstance(trace, LiveTraceScreen)
    await until(pilot, lambda: trace.trace is not None)
    return trace


@pytest.mark.slow
async def test_a_run_another_process_drives_opens_live_and_its_decision_is_answered_there(
    project: Path, waiting: WaitingExec
) -> None:
    waiting.until("approval_requested")
    app = make_app(waiting.store)
    app.animation_level = "none"
    async with app.run_test(size=(140, 40)) as pilot:
        trace = await live_trace(pilot)
        facts = trace.query_one("#trace-facts")
        assert "running" in str(facts.render())
        await pilot.press("a")
        shown = await modal(pilot)
        assert shown.request.target == "calc.py"
        await pilot.press("y")
        await app.workers.wait_for_complete()  # the answer is in the store
        status, last = waiting.finish()
        # Read-only, from the store as written: the view ends where the other process ended.
        await until(pilot, lambda: "success" in str(facts.render()))
    assert (status, last["outcome"]) == (0, "success")


def test_the_store_watch_sees_a_write_of_another_connection(tmp_path: Path) -> None:
    import sqlite3

    db = tmp_path / "s.db"
    watch = StoreWatch(db)
    assert not watch.changed()
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("CREATE TABLE t (x)")
    assert watch.changed() and not watch.changed()
    with sqlite3.connect(db) as conn:
        conn.execute("INSERT INTO t VALUES (1)")
    assert watch.changed()

"""The run browser, the trace view, and resuming stored runs from the app."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from textual.message import Message
from textual.pilot import Pilot
from textual.widgets import DataTable, Input, Select

from ioh_tui.tui.app import IohApp
from ioh_tui.tui.factory import make_app
from ioh_tui.tui.messages import ResumeRequested
from ioh_tui.tui.screens.answer import StoredApprovalModal
from ioh_tui.tui.screens.budget import BudgetModal
from ioh_tui.tui.screens.run import RunScreen
from ioh_tui.tui.screens.runs import RunBrowserScreen
from ioh_tui.tui.screens.start import StartScreen
from ioh_tui.tui.screens.trace import TraceScreen
from ioh_tui.tui.widgets.meter import Meter
from tests.tui.harness import FIX_CALC, FIXED, READ_CALC, USAGE, modal, notifications, until
from tests.tui.stored_runs import history, resumer_with

SIZE = (120, 36)


def rows(table: DataTable[Any]) -> list[list[str]]:
    """A table's cells as plain text."""
    return [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]


def app_over(db: Path, *turns: dict[str, Any]) -> IohApp:
    """The start screen over `db`; resumed runs are driven by a scripted model playing `turns`."""
    app = make_app(db, resumer=resumer_with(*turns))
    app.animation_level = "none"
    return app


async def browser(pilot: Pilot[Any]) -> RunBrowserScreen:
    """From the start screen, `b`, then wait for the runs."""
    await pilot.app.workers.wait_for_complete()
    await pilot.press("b")
    await until(pilot, lambda: isinstance(pilot.app.screen, RunBrowserScreen))
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    screen = pilot.app.screen
    assert isinstance(screen, RunBrowserScreen)
    return screen


async def ended(pilot: Pilot[Any]) -> None:
    """Wait until the app's current run has ended and its view has drained its events.

    Polls rather than waiting for every worker: the run view's own workers (the workspace
    watcher, the process sampler) are cancelled as a run ends, which `wait_for_complete` reports.
    """
    app = pilot.app
    assert isinstance(app, IohApp)

    def done() -> bool:
        view = app.run_screen
        return not app.running and view is not None and view.outcome is not None

    await until(pilot, done)
    await pilot.pause()


def run_ids(screen: RunBrowserScreen) -> list[str]:
    return [row[0] for row in rows(screen.query_one("#runs-table", DataTable))]


async def select_run(pilot: Pilot[Any], screen: RunBrowserScreen, run_id: int) -> None:
    table = screen.query_one("#runs-table", DataTable)
    table.move_cursor(row=[r.id for r in screen.shown].index(run_id))
    await pilot.pause()


async def test_b_opens_the_browser_listing_root_runs_newest_first(tmp_path: Path) -> None:
    app = app_over(await history(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        screen = await browser(pilot)
        table = rows(screen.query_one("#runs-table", DataTable))
        assert [row[0] for row in table] == ["7", "6", "5", "2", "1"]  # sub-agents 3, 4 are not
        assert [row[2] for row in table] == [
            "crashed",
            "awaiting_approval",
            "step_cap_reached",
            "finished",
            "success",
        ]
        assert table[-1][1:5] == ["make add add", "success", "2", "1.9k"]
        await pilot.press("escape")
        assert isinstance(app.screen, StartScreen)


async def test_the_filters_match_text_and_state(tmp_path: Path) -> None:
    app = app_over(await history(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        screen = await browser(pilot)
        await pilot.press("slash", *"adder")
        assert run_ids(screen) == ["6"]
        await pilot.press("escape")  # leaves the field, not the screen
        assert isinstance(app.screen, RunBrowserScreen)
        await pilot.press("f")  # state: paused
        assert screen.query_one("#runs-status", Select).value == "paused"
        assert run_ids(screen) == ["6"]
        screen.query_one("#runs-filter").focus()
        await pilot.press(*["backspace"] * 5, "enter")
        await pilot.press("f")  # crashed
        assert run_ids(screen) == ["7"]
        await pilot.press("f", "f")  # running (none), then failed
        assert run_ids(screen) == ["5"]
        await pilot.press("f")  # succeeded
        assert run_ids(screen) == ["2", "1"]
        await pilot.press("slash", *"zzz")
        assert rows(screen.query_one("#runs-table", DataTable))[0][1] == (
            "no run matches the filters"
        )


async def test_enter_opens_the_trace_with_decisions_and_gate_attempts(tmp_path: Path) -> None:
    app = app_over(await history(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        screen = await browser(pilot)
        await select_run(pilot, screen, 1)
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, TraceScreen))
        await app.workers.wait_for_complete()
        await pilot.pause()
        trace = app.screen
        assert isinstance(trace, TraceScreen)
        title = str(trace.query_one("#trace-title").render())
        assert title == "run 1 · make add add"
        decisions = rows(trace.query_one("#trace-decisions", DataTable))
        assert decisions[0][:7] == [
            "1",
            "read",
            "README.md",
            "refused",
            "policy",
            "README.md",
            "project",
        ]
        assert decisions[1][:7] == [
            "2",
            "write",
            "calc.py",
            "approved",
            "approver",
            "calc.py",
            "project",
        ]
        gate = rows(trace.query_one("#trace-gate", DataTable))
        assert [g[:2] for g in gate] == [["1", "✗ failed"], ["2", "● passed"]]
        assert gate[0][2].endswith("AssertionError: add is wrong")
        steps = rows(trace.query_one("#trace-steps", DataTable))
        assert [s[1] for s in steps] == ["read calc.py", "read README.md", "edit calc.py"]
        assert [s[3] for s in steps] == ["✓ ok", "⊘ refused", "✓ ok"]
        await pilot.press("escape")
        assert app.screen is screen


async def test_a_sub_agent_opens_from_its_root_trace(tmp_path: Path) -> None:
    app = app_over(await history(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        screen = await browser(pilot)
        await select_run(pilot, screen, 2)
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, TraceScreen))
        await app.workers.wait_for_complete()
        await pilot.press("5")
        await pilot.pause()
        agents = rows(app.screen.query_one("#trace-agents", DataTable))
        assert [a[2:4] for a in agents] == [
            ["survey part 1", "finished"],
            ["survey part 2", "finished"],
        ]
        await pilot.press("down", "enter")
        await until(pilot, lambda: getattr(app.screen, "run_id", None) == 4)
        await app.workers.wait_for_complete()
        await pilot.pause()
        facts = str(app.screen.query_one("#trace-facts").render())
        assert "sub-agent agent-4 of run 2" in facts


async def test_a_finished_run_is_refused_and_a_budget_stopped_one_resumes_once_raised(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = app_over(await history(tmp_path), *[{"tool_calls": [READ_CALC], "usage": USAGE}] * 4)
    seen = notifications(app, monkeypatch)
    messages: list[Message] = []
    async with app.run_test(size=SIZE, message_hook=messages.append) as pilot:
        screen = await browser(pilot)
        await select_run(pilot, screen, 1)
        await pilot.press("r")
        await until(pilot, lambda: len(seen) == 1)
        (asked,) = {id(m): m for m in messages if isinstance(m, ResumeRequested)}.values()
        assert (asked.run_id, asked.decision, dict(asked.overrides)) == (1, None, {})
        assert app.run_screen is None and app.screen is screen
        # Run 5 stopped at its step cap (1 of 1): r offers to raise it, then resumes.
        await select_run(pilot, screen, 5)
        await pilot.press("r")
        await until(pilot, lambda: isinstance(app.screen, BudgetModal))
        offer = app.screen
        assert isinstance(offer, BudgetModal)
        assert offer.budget.describe() == "1 of 1 steps"
        await pilot.press("s")  # stop and let-finish do not apply to an ended run
        assert app.screen is offer
        await pilot.press("r")
        offer.query_one("#budget-limit", Input).value = "3"
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, RunScreen))
        await ended(pilot)
    assert seen[0] == "Run 1 has finished (success): there is nothing left to resume."
    assert app.result is not None
    assert (app.result.outcome, app.result.steps) == ("step_cap_reached", 3)


async def test_answering_a_deferred_decision_on_the_start_screen_resumes_the_run(
    tmp_path: Path,
) -> None:
    db = await history(tmp_path)
    app = app_over(db, {"tool_calls": [FIX_CALC], "usage": USAGE})
    messages: list[Message] = []
    async with app.run_test(size=SIZE, message_hook=messages.append) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        start = app.screen
        assert isinstance(start, StartScreen)
        await pilot.press("enter")  # the pending decision is the first row, focused
        ask = await modal(pilot)
        assert isinstance(ask, StoredApprovalModal)
        assert (ask.request.run_id, ask.request.target) == (6, "calc.py")
        await pilot.press("y")
        await until(pilot, lambda: isinstance(app.screen, RunScreen))
        await ended(pilot)
        assert app.result is not None and app.result.outcome == "success"
    (asked, *_) = [m for m in messages if isinstance(m, ResumeRequested)]
    assert asked.run_id == 6 and asked.decision is not None and asked.decision.kind == "approve"
    assert (tmp_path / "p6" / "calc.py").read_text() == FIXED


async def test_esc_on_a_stored_decision_leaves_it_pending(tmp_path: Path) -> None:
    app = app_over(await history(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press("enter")
        await modal(pilot)
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, StartScreen))
        await app.workers.wait_for_complete()
        assert app.run_screen is None
        pending = rows(app.screen.query_one("#start-pending", DataTable))
    assert pending[0][:2] == ["6", "2"]


async def test_r_resumes_a_paused_run_which_asks_again_then_a_second_run_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = app_over(await history(tmp_path), {"tool_calls": [FIX_CALC], "usage": USAGE})
    seen = notifications(app, monkeypatch)
    async with app.run_test(size=SIZE) as pilot:
        screen = await browser(pilot)
        await select_run(pilot, screen, 6)
        await pilot.press("r")
        await modal(pilot)  # the deferred write is asked again in the run view
        first = app.run_screen
        app.resume_run(7)  # refused: a run is going
        await until(pilot, lambda: bool(seen))
        assert seen[0].startswith("A run is going in this app")
        await pilot.press("y")
        await ended(pilot)
        assert app.result is not None and app.result.outcome == "success"
        # Once it ended, the crashed run resumes in a fresh run view (from its first step).
        app.resume_run(7)
        await until(pilot, lambda: app.run_screen is not first and app.run_screen is not None)
        await modal(pilot)
        await pilot.press("y")
        await ended(pilot)
        resumed = app.result  # a new result: the assertion on the first one says nothing of it
        assert resumed is not None and resumed.outcome == "finished"
        assert resumed.run_id == 7


async def test_without_a_resumer_the_app_says_how_to_resume(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = make_app(await history(tmp_path))
    seen = notifications(app, monkeypatch)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        app.resume_run(6)
        await pilot.pause()
    assert seen == ["This app cannot resume runs: use `ioh-tui resume 6`."]


async def test_enter_on_a_recent_run_opens_its_trace(tmp_path: Path) -> None:
    app = app_over(await history(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        app.screen.query_one("#start-runs", DataTable).focus()
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, TraceScreen))
        trace = app.screen
        assert isinstance(trace, TraceScreen)
        assert trace.run_id == 7
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert "crashed" in str(trace.query_one("#trace-facts").render())


async def test_a_resumed_run_s_meters_start_from_what_it_spent(tmp_path: Path) -> None:
    # Run 5 spent 960 tokens in its one step, an hour ago, before its cap stopped it. Resumed,
    # its meters must say so from the start (the time as its time budget counts it), not 0
    # until the resumed drive's first step is committed.
    db = await history(tmp_path)
    with sqlite3.connect(db) as conn:
        conn.execute(
            "UPDATE runs SET started_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-1 hour')"
            " WHERE id = 5"
        )
    # The scripted model plays the turn after those the transcript holds: step 2's is slow.
    read = {"tool_calls": [READ_CALC], "usage": USAGE}
    app = app_over(db, read, {**read, "delay_ms": 1500}, read)
    async with app.run_test(size=SIZE) as pilot:
        screen = await browser(pilot)
        await select_run(pilot, screen, 5)
        await pilot.press("r")
        await until(pilot, lambda: isinstance(app.screen, BudgetModal))
        await pilot.press("r")
        app.screen.query_one("#budget-limit", Input).value = "3"
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, RunScreen))
        view = app.run_screen
        assert view is not None
        await until(pilot, lambda: view.totals.started_at is not None)
        assert view.query_one("#meter-tokens", Meter).value == 960
        assert 3600 <= view.query_one("#meter-time", Meter).value < 3600 + 60
        await ended(pilot)
        assert view.query_one("#meter-tokens", Meter).value == 3 * 960

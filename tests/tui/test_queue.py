"""One queue of decisions: every agent's asks in one list; similar ones answered together."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from textual.widgets import DataTable, Input

from ioh_tui.engine import TaskContract, run
from ioh_tui.policy import DeferAll
from ioh_tui.sandbox import select
from ioh_tui.store import Store
from ioh_tui.tui.app import IohApp
from ioh_tui.tui.factory import make_app
from ioh_tui.tui.screens.batch import BatchModal
from ioh_tui.tui.screens.queue import DecisionQueueScreen
from tests.snapshots.apps.fleet import writers_app
from tests.tui.harness import (
    CHECK,
    FIX_CALC,
    FIXED,
    USAGE,
    calc_project,
    finished,
    modal,
    run_screen,
    scripted,
    until,
)
from tests.tui.stored_runs import history, resumer_with


async def open_queue_with(app: IohApp, pilot: Any, asks: int) -> DecisionQueueScreen:
    """Wait until `asks` decisions wait, then open the queue from the modal with w."""
    shown = await modal(pilot)
    await until(pilot, lambda: len(run_screen(app).desk.asks) == asks)
    assert shown.waiting == asks
    await pilot.press("w")
    await until(pilot, lambda: isinstance(app.screen, DecisionQueueScreen))
    queue = app.screen
    assert isinstance(queue, DecisionQueueScreen)
    await pilot.pause()
    return queue


async def queue_from_start(pilot: Any) -> DecisionQueueScreen:
    """From the start screen, `w`, then wait for the stored decisions to be listed."""
    app = pilot.app
    await app.workers.wait_for_complete()
    await pilot.press("w")
    await until(pilot, lambda: isinstance(app.screen, DecisionQueueScreen))
    queue = app.screen
    assert isinstance(queue, DecisionQueueScreen)
    await until(pilot, lambda: bool(queue.items))
    return queue


async def test_similar_asks_of_three_agents_are_approved_with_one_suggested_rule(
    tmp_path: Path,
) -> None:
    app = writers_app(tmp_path, 3)
    async with app.run_test(size=(140, 40)) as pilot:
        queue = await open_queue_with(app, pilot, 3)
        table = queue.query_one(DataTable)
        assert table.row_count == 3
        assert sorted(i.request.target for i in queue.items) == [
            "notes/child0.md",
            "notes/child1.md",
            "notes/child2.md",
        ]
        assert "3 similar requests" in str(queue.query_one("#queue-hint").render())
        await pilot.press("s")
        assert len(queue.marked) == 3
        await pilot.press("A")
        await until(pilot, lambda: isinstance(app.screen, BatchModal))
        batch = app.screen
        assert isinstance(batch, BatchModal)
        assert batch.query_one("#batch-input", Input).value == "notes/*"
        await pilot.press("enter")
        await until(pilot, lambda: not run_screen(app).desk.asks)
        await pilot.press("escape")
        await finished(pilot)
        assert run_screen(app).outcome == "finished"
    project = tmp_path / "project"
    assert sorted(p.name for p in (project / "notes").iterdir()) == [
        "child0.md",
        "child1.md",
        "child2.md",
    ]
    async with Store.open(tmp_path / "store.db") as store:
        answered = await store.approvals()
    assert [a.status for a in answered] == ["approve"] * 3
    assert all("write allow notes/*" in a.remembered for a in answered)


async def test_a_narrowed_rule_answers_only_what_it_covers_and_deny_takes_one_reason(
    tmp_path: Path,
) -> None:
    app = writers_app(tmp_path, 3)
    async with app.run_test(size=(140, 40)) as pilot:
        queue = await open_queue_with(app, pilot, 3)
        await pilot.press("s", "A")
        await until(pilot, lambda: isinstance(app.screen, BatchModal))
        batch = app.screen
        assert isinstance(batch, BatchModal)
        batch.query_one("#batch-input", Input).value = "notes/child1*"
        await pilot.pause()
        assert "approves 1 of 3" in str(batch.query_one("#batch-effect").render())
        await pilot.press("enter")
        await until(pilot, lambda: len(run_screen(app).desk.asks) == 2)
        await until(
            pilot, lambda: app.screen is queue and queue.query_one(DataTable).row_count == 2
        )
        await pilot.press("s", "n")
        await until(pilot, lambda: isinstance(app.screen, BatchModal))
        await pilot.press(*"not now", "enter")
        await until(pilot, lambda: not run_screen(app).desk.asks)
        await pilot.press("escape")
        await finished(pilot)
    assert [p.name for p in (tmp_path / "project" / "notes").iterdir()] == ["child1.md"]
    async with Store.open(tmp_path / "store.db") as store:
        answered = {a.target: a for a in await store.approvals()}
    assert answered["notes/child1.md"].status == "approve"
    assert [answered[f"notes/child{i}.md"].reason for i in (0, 2)] == ["not now"] * 2


async def test_from_the_start_screen_w_lists_deferred_decisions_and_answering_resumes(
    tmp_path: Path,
) -> None:
    db = await history(tmp_path)
    app = make_app(db, resumer=resumer_with({"tool_calls": [FIX_CALC]}))
    app.animation_level = "none"
    async with app.run_test(size=(140, 40)) as pilot:
        queue = await queue_from_start(pilot)
        deferred = [(i.where, i.root_run_id, i.request.goal) for i in queue.items]
        assert deferred == [("deferred", 6, "fix the adder again")]
        await pilot.press("enter")
        ask = await modal(pilot)
        assert ask.request.target == "calc.py"
        await pilot.press("y")
        await until(pilot, lambda: app.result is not None)
        assert app.result is not None and app.result.outcome == "success"
    assert (tmp_path / "p6" / "calc.py").read_text() == FIXED


async def test_a_decision_another_process_waits_on_is_answered_through_the_store(
    tmp_path: Path,
) -> None:
    db = tmp_path / "store.db"
    async with Store.open(db) as store:
        run_id = await store.start_run(
            goal="driven elsewhere",
            mode="workspace",
            root=str(tmp_path),
            subject=None,
            contract={},
            provider="scripted",
            model=None,
            sandbox="floor",
        )
        # A live driver: this very process (alive), holding a fresh lease.
        await store.acquire_lease(run_id, f"{os.getpid()}-{time.time_ns()}-1", 600.0)
        request = await store.create_approval(
            run_id, 1, {"act": "exec", "target": "make deploy", "tool": "exec"}
        )
    app = make_app(db)
    app.animation_level = "none"
    async with app.run_test(size=(140, 40)) as pilot:
        queue = await queue_from_start(pilot)
        assert [i.where for i in queue.items] == ["elsewhere"]
        await pilot.press("enter")
        await modal(pilot)
        await pilot.press("n", *"not from here", "enter")
        await until(pilot, lambda: not queue.items)
    async with Store.open(db) as store:
        row = await store.approval(request)
    assert row is not None
    assert (row.status, row.decided_by, row.reason) == (
        "deny",
        "attached",
        "not from here",
    )


async def test_esc_on_a_stored_decision_from_the_queue_leaves_it_pending(tmp_path: Path) -> None:
    app = make_app(await history(tmp_path), resumer=resumer_with())
    app.animation_level = "none"
    async with app.run_test(size=(140, 40)) as pilot:
        queue = await queue_from_start(pilot)
        await pilot.press("enter")
        await modal(pilot)
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is queue)
        assert app.run_screen is None and [i.where for i in queue.items] == ["deferred"]


async def test_similar_decisions_of_two_paused_runs_are_answered_together_from_the_queue(
    tmp_path: Path,
) -> None:
    db = tmp_path / "store.db"
    async with Store.open(db) as store:
        paused = [
            await run(
                TaskContract.workspace(goal, calc_project(tmp_path / f"p{i}"), CHECK),
                scripted({"tool_calls": [FIX_CALC], "usage": USAGE}),
                store=store,
                approver=DeferAll(),
                sandbox=select("floor"),
            )
            for i, goal in enumerate(["fix the adder", "fix the adder again"])
        ]
    assert [r.outcome for r in paused] == ["awaiting_approval"] * 2
    app = make_app(db, resumer=resumer_with({"text": "Fixed."}))
    app.animation_level = "none"
    async with app.run_test(size=(140, 40)) as pilot:
        queue = await queue_from_start(pilot)
        assert [i.where for i in queue.items] == ["deferred", "deferred"]
        assert "2 similar requests" in str(queue.query_one("#queue-hint").render())
        await pilot.press("s", "A")
        await until(pilot, lambda: isinstance(app.screen, BatchModal))
        batch = app.screen
        assert isinstance(batch, BatchModal)
        assert batch.query_one("#batch-input", Input).value == "calc.py"
        await pilot.press("enter")
        await until(pilot, lambda: app.screen is queue and not queue.items)
        # Answered, not resumed: each paused run takes its answer when it is resumed.
        assert app.screen is queue and not app.running
        app.resume_run(paused[1].run_id)
        await until(pilot, lambda: app.result is not None)
        assert not run_screen(app).desk.asks  # nothing was asked again
        assert app.result is not None and app.result.outcome == "success"
    async with Store.open(db) as store:
        answered = await store.approvals()
    assert [(a.status, a.decided_by) for a in answered] == [("approve", "queue")] * 2
    assert all("write allow calc.py" in a.remembered for a in answered)
    assert (tmp_path / "p1" / "calc.py").read_text() == FIXED
    assert "a - b" in (tmp_path / "p0" / "calc.py").read_text()  # not resumed yet


async def test_a_crashed_runs_request_is_not_marked(tmp_path: Path) -> None:
    db = await history(tmp_path)
    async with Store.open(db) as store:
        # Run 7 died while asking: its request is left pending with no driver.
        await store.create_approval(7, 1, {"act": "exec", "target": "make", "tool": "exec"})
    app = make_app(db, resumer=resumer_with())
    app.animation_level = "none"
    async with app.run_test(size=(140, 40)) as pilot:
        queue = await queue_from_start(pilot)
        await until(pilot, lambda: len(queue.items) == 2)
        crashed = [i.where for i in queue.items].index("crashed")
        queue.query_one(DataTable).move_cursor(row=crashed)
        await pilot.press("space", "s")
        assert not queue.marked

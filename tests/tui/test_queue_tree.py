"""The queue answers a sub-agent's deferred decision by resuming its tree's root."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ioh_tui.engine import Containment, Resume, TaskContract, run_tree
from ioh_tui.policy import DeferAll
from ioh_tui.providers import ScriptedProvider
from ioh_tui.providers.testing.scenario import parse_scenario
from ioh_tui.sandbox import select
from ioh_tui.store import Store
from ioh_tui.tui.app_run import AppRun
from ioh_tui.tui.factory import make_app
from ioh_tui.verification import NoGate
from tests.tui.harness import calc_project, modal, until
from tests.tui.test_queue import queue_from_start

WRITER: dict[str, Any] = {
    "turns": [
        {
            "tool_calls": [
                {"name": "write_file", "arguments": {"path": "notes.txt", "content": "hi\n"}}
            ]
        },
        {"text": "Notes handled."},
    ]
}


def tree_model() -> ScriptedProvider:
    """A root whose one waited child writes notes.txt."""
    spawn = {"name": "spawn_agent", "arguments": {"goal": "write notes"}}
    return ScriptedProvider(
        parse_scenario(
            {
                "model": "test-model",
                "turns": [{"tool_calls": [spawn]}, {"text": "All done."}],
                "agents": {"write notes": WRITER},
            }
        )
    )


def resumed(request: Resume, contract: dict[str, Any]) -> AppRun:
    return AppRun(request, tree_model(), sandbox=select("floor"))


async def test_approving_a_childs_deferred_write_in_the_queue_resumes_the_tree(
    tmp_path: Path,
) -> None:
    db = tmp_path / "store.db"
    project = calc_project(tmp_path / "p")
    async with Store.open(db) as store:
        paused = await run_tree(
            TaskContract.workspace("split", project, NoGate()),
            tree_model(),
            store=store,
            containment=Containment(max_total_agents=2, max_concurrent=1, max_depth=1),
            approver=DeferAll(),
            sandbox=select("floor"),
        )
    assert paused.outcome == "awaiting_approval"
    app = make_app(db, resumer=resumed)
    app.animation_level = "none"
    async with app.run_test(size=(140, 40)) as pilot:
        queue = await queue_from_start(pilot)
        assert [(i.where, i.root_run_id) for i in queue.items] == [("deferred", paused.run_id)]
        await pilot.press("enter")
        ask = await modal(pilot)
        assert ask.request.target == "notes.txt"
        await pilot.press("y")
        await until(pilot, lambda: app.result is not None)
        assert app.result is not None and app.result.outcome == "finished"
    assert (project / "notes.txt").read_text() == "hi\n"
    async with Store.open(db) as store:
        assert await store.approvals(pending_only=True) == []

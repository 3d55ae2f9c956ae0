"""A sub-agent's deferred decision pauses the whole tree; resuming the root answers it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ioh_tui.engine import (
    Containment,
    RunResult,
    TaskContract,
    resume,
    resume_with_decision,
    run_tree,
)
from ioh_tui.policy import ApproveAll, Decision, DeferAll
from ioh_tui.providers import ScriptedProvider
from ioh_tui.providers.testing.scenario import parse_scenario
from ioh_tui.sandbox import select
from ioh_tui.store import Store
from ioh_tui.verification import NoGate

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
READER: dict[str, Any] = {
    "turns": [
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "calc.py"}}]},
        {"text": "Read it."},
    ]
}
CONTAINMENT = Containment(max_total_agents=4, max_concurrent=2, max_depth=1)


def _model(turns: list[dict[str, Any]]) -> ScriptedProvider:
    agents = {"write notes": WRITER, "read calc": READER}
    return ScriptedProvider(parse_scenario({"turns": turns, "agents": agents}))


async def _deferred(store: Store, contract: TaskContract, model: ScriptedProvider) -> RunResult:
    """Run the tree with every decision deferred (it pauses on a child's write)."""
    return await run_tree(
        contract,
        model,
        store=store,
        containment=CONTAINMENT,
        approver=DeferAll(),
        sandbox=select("floor"),
    )


def _spawn(goal: str, *, wait: bool = True) -> dict[str, Any]:
    return {"name": "spawn_agent", "arguments": {"goal": goal, "wait": wait}}


async def test_a_detached_childs_deferred_write_pauses_the_root_until_it_is_answered(
    project: Path,
) -> None:
    turns: list[dict[str, Any]] = [
        {"tool_calls": [_spawn("write notes", wait=False)]},
        {"delay_ms": 200, "tool_calls": [{"name": "read_file", "arguments": {"path": "calc.py"}}]},
        {"text": "All done."},
    ]
    contract = TaskContract.workspace("split", project, NoGate())
    async with Store.memory() as store:
        paused = await _deferred(store, contract, _model(turns))
        (kid,) = await store.children(paused.run_id)
        assert (paused.outcome, (await store.run(paused.run_id)).status) == (
            "awaiting_approval",
            "paused",
        )
        assert f"{kid.agent_label} (run {kid.id}) waits on a decision" in paused.detail
        assert not (project / "notes.txt").exists()

        done = await resume_with_decision(
            paused.run_id,
            Decision.approve(),
            _model(turns),
            store=store,
            approver=DeferAll(),
            sandbox=select("floor"),
        )
        kid = await store.run(kid.id)
        pending = await store.approvals(pending_only=True)
    assert done.outcome == "finished"
    assert (kid.status, kid.outcome) == ("completed", "finished")
    assert (project / "notes.txt").read_text() == "hi\n"
    assert pending == []


async def test_a_sibling_that_finished_keeps_its_state_while_the_paused_one_is_answered(
    project: Path,
) -> None:
    turns: list[dict[str, Any]] = [
        {"tool_calls": [_spawn("read calc"), _spawn("write notes")]},
        {"text": "All done."},
    ]
    contract = TaskContract.workspace("split", project, NoGate())
    async with Store.memory() as store:
        paused = await _deferred(store, contract, _model(turns))
        reader, writer = await store.children(paused.run_id)
        assert paused.outcome == "awaiting_approval"
        assert (reader.status, reader.outcome, writer.status) == ("completed", "finished", "paused")
        assert await store.last_step(paused.run_id) == 0  # the step waiting on them is not kept

        done = await resume_with_decision(
            paused.run_id,
            Decision.deny("not now"),
            _model(turns),
            store=store,
            sandbox=select("floor"),
        )
        after = await store.run(reader.id)
        spawns = [c for c in await store.tool_calls(paused.run_id) if c.name == "spawn_agent"]
        writer_told = [m.content for m in await store.messages(writer.id) if m.role == "tool"]
    assert done.outcome == "finished"
    assert (after.steps, after.tokens, after.outcome) == (reader.steps, reader.tokens, "finished")
    assert [("-> finished" in c.output) for c in spawns] == [True, True]
    assert "Read it." in spawns[0].output and "Notes handled." in spawns[1].output
    assert any("not now" in text for text in writer_told)
    assert not (project / "notes.txt").exists()


OTHER: dict[str, Any] = {
    "turns": [
        {
            "tool_calls": [
                {"name": "write_file", "arguments": {"path": "other.txt", "content": "ho\n"}}
            ]
        },
        {"text": "Other handled."},
    ]
}


async def test_one_resume_answers_the_oldest_request_and_the_other_child_asks_again(
    project: Path,
) -> None:
    model = ScriptedProvider(
        parse_scenario(
            {
                "turns": [
                    {"tool_calls": [_spawn("write notes"), _spawn("write other")]},
                    {"text": "All done."},
                ],
                "agents": {"write notes": WRITER, "write other": OTHER},
            }
        )
    )
    contract = TaskContract.workspace("split", project, NoGate())
    async with Store.memory() as store:
        paused = await _deferred(store, contract, model)
        first, second = await store.approvals(pending_only=True)
        assert f"request {first.id}," in paused.detail
        asked = ApproveAll()
        done = await resume_with_decision(
            paused.run_id,
            Decision.deny("not the notes"),
            model,
            store=store,
            approver=asked,
            sandbox=select("floor"),
        )
        answered = {a.id: a for a in await store.approvals()}
    assert done.outcome == "finished"
    assert [r.target for r in asked.seen] == [second.target]  # only the other one was asked
    assert (answered[first.id].status, answered[first.id].reason) == ("deny", "not the notes")
    assert answered[second.id].status == "approve"
    assert not (project / first.target).exists() and (project / second.target).exists()


async def test_a_childs_request_answered_in_the_store_is_taken_when_the_root_resumes(
    project: Path,
) -> None:
    turns: list[dict[str, Any]] = [{"tool_calls": [_spawn("write notes")]}, {"text": "All done."}]
    contract = TaskContract.workspace("split", project, NoGate())
    async with Store.memory() as store:
        paused = await _deferred(store, contract, _model(turns))
        (request,) = await store.approvals(pending_only=True)
        # The queue answers stored requests in the store; the paused tree takes it on resume.
        assert await store.answer_approval(request.id, Decision.approve().to_row(), by="queue")
        asked = ApproveAll()
        done = await resume(
            paused.run_id, _model(turns), store=store, approver=asked, sandbox=select("floor")
        )
    assert done.outcome == "finished" and asked.seen == []
    assert (project / "notes.txt").read_text() == "hi\n"

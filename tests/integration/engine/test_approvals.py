"""The decision gate through the real loop: deny-first, and the five answers end to end."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from ioh_tui.core.acts import Act, Effect
from ioh_tui.engine import CancelToken, RunResult, TaskContract, resume, run
from ioh_tui.policy import (
    ApprovalRequest,
    Decision,
    DeferAll,
    Policy,
    Rule,
    load_policy_file,
)
from ioh_tui.sandbox import select
from ioh_tui.store import Store
from ioh_tui.verification import NoGate
from tests.integration.engine.helpers import CHECK, FIX_CALC, Recorder, scripted

FIXED = "def add(a, b):\n    return a + b\n"


class Scripted:
    """An approver answering from a list, recording what it was shown."""

    def __init__(self, *answers: Decision) -> None:
        self.answers = list(answers)
        self.seen: list[ApprovalRequest] = []

    async def decide(self, request: ApprovalRequest) -> Decision:
        self.seen.append(request)
        return self.answers.pop(0)


class Never:
    """An approver that never answers (a person who walked away)."""

    async def decide(self, request: ApprovalRequest) -> Decision:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")


def contract(project: Path, **kw: object) -> TaskContract:
    return TaskContract.workspace("fix add", project, CHECK)


async def paused_run(store: Store, project: Path, *turns: dict[str, Any]) -> RunResult:
    """A run of `turns` whose first ask is deferred: it pauses there."""
    return await run(
        contract(project),
        scripted(*turns),
        store=store,
        approver=DeferAll(),
        sandbox=select("floor"),
    )


async def test_a_denied_write_never_reaches_the_approver(project: Path) -> None:
    provider = scripted(
        {
            "tool_calls": [
                {"name": "write_file", "arguments": {"path": "config/.env", "content": "X=1"}}
            ]
        },
        {"tool_calls": [FIX_CALC]},
    )
    approver = Scripted(Decision.approve())
    async with Store.memory() as store:
        result = await run(
            contract(project), provider, store=store, approver=approver, sandbox=select("floor")
        )
        calls = await store.tool_calls(result.run_id)
        refusals = [e for e in await store.policy_events(result.run_id) if e.kind == "refusal"]
    assert not (project / "config" / ".env").exists()
    assert calls[0].refused and "builtin-secrets" in calls[0].output
    assert refusals[0].layer == "builtin-secrets"
    assert [r.target for r in approver.seen] == [
        "calc.py"
    ]  # only the allowed-by-ask edit was asked


async def test_a_write_under_the_default_tiers_asks_with_a_diff(project: Path) -> None:
    approver = Scripted(Decision.approve())
    seen = Recorder()
    async with Store.memory() as store:
        result = await run(
            contract(project),
            scripted({"tool_calls": [FIX_CALC]}),
            store=store,
            approver=approver,
            sandbox=select("floor"),
            observers=[seen],
        )
        row = (await store.approvals(result.run_id))[0]
    assert result.outcome == "success"
    (request,) = approver.seen
    assert (request.act, request.target, request.rule, request.layer) == (
        Act.WRITE,
        "calc.py",
        None,
        None,
    )
    assert (
        request.preview is not None
        and "-    return a - b" in request.preview
        and "+    return a + b" in request.preview
    )
    assert request.content == FIXED
    assert row.status == "approve" and row.preview == request.preview
    asked, resolved = seen.of("approval_requested")[0], seen.of("approval_resolved")[0]
    assert asked.request_id == resolved.request_id == row.id
    assert (resolved.decision, resolved.modified) == ("approve", False)


async def test_rewrite_performs_the_rewritten_action_and_records_both(project: Path) -> None:
    rewritten = "def add(a, b):\n    return b + a  # operator's version\n"
    provider = scripted({"tool_calls": [FIX_CALC]}, {"text": "ok"})
    async with Store.memory() as store:
        result = await run(
            contract(project),
            provider,
            store=store,
            sandbox=select("floor"),
            approver=Scripted(Decision.rewrite(content=rewritten)),
        )
        row = (await store.approvals(result.run_id))[0]
        call = (await store.tool_calls(result.run_id))[0]
    assert (project / "calc.py").read_text() == rewritten
    assert result.outcome == "success"
    assert row.content == FIXED and row.performed_content == rewritten
    assert "rewrote this action" in call.output


async def test_a_rewrite_aimed_at_a_denied_path_is_refused(project: Path) -> None:
    provider = scripted({"tool_calls": [FIX_CALC]}, {"text": "ok"})
    async with Store.memory() as store:
        result = await run(
            contract(project).with_max_steps(2),
            provider,
            store=store,
            sandbox=select("floor"),
            approver=Scripted(Decision.rewrite(target=".env", content="STOLEN=1")),
        )
        call = (await store.tool_calls(result.run_id))[0]
    assert not (project / ".env").exists()
    assert call.refused and "may not cross a deny" in call.output
    assert "a - b" in (project / "calc.py").read_text()


async def test_remember_stops_further_asks_but_never_beats_a_deny(
    project: Path, tmp_path: Path
) -> None:
    saved = tmp_path / "remembered.toml"
    provider = scripted(
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "a.txt", "content": "1"}}]},
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "b.txt", "content": "2"}}]},
        {"tool_calls": [{"name": "write_file", "arguments": {"path": ".env", "content": "3"}}]},
        {"text": "done"},
    )
    approver = Scripted(
        Decision.remembering(Rule(Act.WRITE, Effect.ALLOW, "*"), scope="file", file=saved)
    )
    async with Store.memory() as store:
        result = await run(
            TaskContract.workspace("write", project, NoGate()),
            provider,
            store=store,
            approver=approver,
            sandbox=select("floor"),
        )
        calls = await store.tool_calls(result.run_id)
    assert len(approver.seen) == 1 and result.remembered == ("write allow *",)
    assert (project / "a.txt").read_text() == "1" and (project / "b.txt").read_text() == "2"
    assert calls[2].refused and not (project / ".env").exists()
    # Saved to a file and stacked over a policy with a deny in a lower layer: the deny still wins.
    stacked = Policy.default().layer("ops").deny_write("infra/*").merge(load_policy_file(saved))
    assert stacked.check(Act.WRITE, "b.txt") is Effect.ALLOW
    assert stacked.check(Act.WRITE, "infra/main.tf") is Effect.DENY


async def test_deny_with_a_reason_the_model_reads(project: Path) -> None:
    provider = scripted({"tool_calls": [FIX_CALC]}, {"text": "understood"})
    async with Store.memory() as store:
        result = await run(
            contract(project).with_max_steps(2),
            provider,
            store=store,
            sandbox=select("floor"),
            approver=Scripted(Decision.deny("use multiplication instead")),
        )
    assert "a - b" in (project / "calc.py").read_text()
    assert result.outcome == "step_cap_reached"
    told = "\n".join(m.content for m in provider.requests[1].messages)
    assert "[write denied] calc.py — use multiplication instead" in told


async def test_defer_pauses_durably_and_resume_applies_exactly_once(
    project: Path, tmp_path: Path
) -> None:
    db = tmp_path / "t.db"
    turns = ({"tool_calls": [FIX_CALC]}, {"text": "done"})
    async with Store.open(db) as store:
        first = await paused_run(store, project, *turns)
    assert (first.outcome, first.exit_status, first.steps) == ("awaiting_approval", 4, 1)
    assert "a - b" in (project / "calc.py").read_text()
    async with Store.open(db) as store:
        (pending,) = await store.approvals(pending_only=True)
        assert pending.content == FIXED and pending.run_id == first.run_id
        second = await resume(
            first.run_id,
            scripted(*turns),
            store=store,
            decision=Decision.approve(),
            sandbox=select("floor"),
        )
        again = await resume(
            first.run_id, scripted(*turns), store=store, decision=None, sandbox=select("floor")
        )
        edits = [c for c in await store.tool_calls(first.run_id) if c.name == "edit_file"]
        assert await store.approvals(pending_only=True) == []
    assert (second.outcome, second.steps) == ("success", 1)
    assert (project / "calc.py").read_text() == FIXED
    assert again.outcome == "success" and len(edits) == 1


async def test_a_paused_runs_decision_answered_in_the_store_is_applied_when_it_resumes(
    project: Path, tmp_path: Path
) -> None:
    db = tmp_path / "t.db"
    turns = ({"tool_calls": [FIX_CALC]}, {"text": "done"})
    async with Store.open(db) as store:
        paused = await paused_run(store, project, *turns)
        (pending,) = await store.approvals(pending_only=True)
        # The queue answers it while the run stays paused, with a rule to keep.
        assert await store.resolve_approval(
            pending.id, status="approve", by="queue", remembered=["write allow calc.py"]
        )
        asked = Scripted()  # must not be asked: the answer is in the store
        resumed = await resume(
            paused.run_id, scripted(*turns), store=store, approver=asked, sandbox=select("floor")
        )
        row = await store.approval(pending.id)
    assert (paused.outcome, resumed.outcome) == ("awaiting_approval", "success")
    assert asked.seen == [] and (project / "calc.py").read_text() == FIXED
    assert row is not None and (row.status, row.decided_by) == ("approve", "queue")
    assert resumed.remembered == ("write allow calc.py",)


async def test_a_paused_runs_decision_denied_in_the_store_is_read_by_the_model(
    project: Path, tmp_path: Path
) -> None:
    db = tmp_path / "t.db"
    provider = scripted({"tool_calls": [FIX_CALC]}, {"text": "giving up"})
    async with Store.open(db) as store:
        paused = await paused_run(store, project, {"tool_calls": [FIX_CALC]})
        (pending,) = await store.approvals(pending_only=True)
        await store.resolve_approval(pending.id, status="deny", by="queue", reason="not yet")
        await resume(paused.run_id, provider, store=store, sandbox=select("floor"))
    told = "\n".join(m.content for m in provider.requests[-1].messages)
    assert "[write denied] calc.py — not yet" in told
    assert "a - b" in (project / "calc.py").read_text()


async def test_an_answer_written_by_another_process_reaches_a_waiting_run(
    project: Path, tmp_path: Path
) -> None:
    db = tmp_path / "t.db"
    async with Store.open(db) as store, Store.open(db) as other:
        task = asyncio.create_task(
            run(
                contract(project),
                scripted({"tool_calls": [FIX_CALC]}),
                store=store,
                approver=Never(),
                sandbox=select("floor"),
            )
        )
        for _ in range(100):
            pending = await other.approvals(pending_only=True)
            if pending:
                break
            await asyncio.sleep(0.02)
        assert await other.resolve_approval(pending[0].id, status="approve", by="attached")
        assert not await other.resolve_approval(pending[0].id, status="deny", by="late")
        result = await asyncio.wait_for(task, 10)
    assert result.outcome == "success"
    assert (project / "calc.py").read_text() == FIXED


async def test_two_answers_at_once_have_exactly_one_winner(project: Path, tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    async with Store.open(db) as store:
        paused = await paused_run(store, project, {"tool_calls": [FIX_CALC]})
        (pending,) = await store.approvals(pending_only=True)
    stores = [Store.open(db) for _ in range(8)]
    opened = [await s.__aenter__() for s in stores]
    try:
        wins = await asyncio.gather(
            *(
                s.resolve_approval(pending.id, status="approve" if i % 2 else "deny", by=f"p{i}")
                for i, s in enumerate(opened)
            )
        )
    finally:
        for s in stores:
            await s.__aexit__(None, None, None)
    assert sum(wins) == 1 and paused.outcome == "awaiting_approval"


async def test_a_run_stopped_while_asking_leaves_no_dead_decision(
    project: Path, tmp_path: Path
) -> None:
    cancel = CancelToken()
    async with Store.open(tmp_path / "t.db") as store:
        task = asyncio.create_task(
            run(
                contract(project),
                scripted({"tool_calls": [FIX_CALC]}),
                store=store,
                approver=Never(),
                sandbox=select("floor"),
                cancel=cancel,
            )
        )
        for _ in range(200):
            if await store.approvals(pending_only=True):
                break
            await asyncio.sleep(0.02)
        cancel.cancel("stopped from the app")
        result = await asyncio.wait_for(task, 10)
        assert result.outcome == "cancelled"
        assert await store.approvals(pending_only=True) == []
        (row,) = await store.approvals(result.run_id)
    assert (row.status, row.reason) == ("expired", "expired: run cancelled")
    assert (project / "calc.py").read_text() != FIXED

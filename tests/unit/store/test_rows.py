"""What the store returns: typed rows, with JSON columns decoded, read back as written."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from ioh_tui.core.acts import Act
from ioh_tui.core.transcript import Image, Message, ToolCall
from ioh_tui.store import CallRecord, StepCommit, Store
from ioh_tui.store.schema import SCHEMA_VERSION

CALL = ToolCall("c1", "edit_file", {"path": "calc.py", "old": "a - b", "new": "a + b"})
BROKEN = ToolCall("c2", "exec", {}, arguments_error="argv=[")
MESSAGES = (
    Message("user", "[child 3 -> finished]"),
    Message("assistant", "Fixing it.", (CALL, BROKEN)),
    Message("tool", "[edited calc.py]", tool_call_id="c1"),
)
RECORD = CallRecord("c1", "edit_file", dict(CALL.arguments), True, False, "[edited calc.py]", "ok")


async def _commit(store: Store, run_id: int, step: int = 1) -> None:
    await store.commit_step(
        StepCommit(
            run_id, step, "[edited calc.py]", "edit_file:{}", 100, 20, 0.5, MESSAGES, [RECORD]
        )
    )


async def test_a_committed_step_reads_back_as_typed_rows(store: Store, run_id: int) -> None:
    await _commit(store, run_id)
    rows = await store.messages(run_id)
    assert [(m.step, m.seq) for m in rows] == [(1, 0), (1, 1), (1, 2)]
    assert tuple(m.message for m in rows) == MESSAGES  # the argument error too
    (call,) = await store.tool_calls(run_id)
    assert (call.step, call.seq, call.call_id, call.arguments) == (1, 0, "c1", CALL.arguments)
    assert call.ok is True and call.refused is False
    (step,) = await store.steps(run_id)
    assert (step.step, step.tokens, step.input_tokens, step.cost_usd) == (1, 120, 100, 0.5)
    run = await store.run(run_id)
    assert (run.steps, run.tokens, run.status, run.outcome) == (1, 120, "running", None)
    assert run.contract == {"goal": "fix add", "max_steps": 4}


async def test_answers_appended_to_a_step_follow_its_rows(store: Store, run_id: int) -> None:
    await _commit(store, run_id)
    late = Message("tool", "[exec denied]", tool_call_id="c2")
    refused = CallRecord("c2", "exec", {}, False, True, "[exec denied]", "denied")
    await store.append_to_step(run_id, 1, [late], [refused])
    assert [m.seq for m in await store.messages(run_id)] == [0, 1, 2, 3]
    assert [(c.seq, c.refused) for c in await store.tool_calls(run_id)] == [(0, False), (1, True)]


async def test_a_journalled_attempt_reads_back_with_its_intent_and_result(
    store: Store, run_id: int
) -> None:
    opened = await store.open_attempt(run_id, 2, 0, "c1", "write_file", {"path": "a.txt"})
    await store.note_intent(opened, {"path": "a.txt", "sha256": "00", "output": "[wrote]"})
    still_open = await store.open_attempt(run_id, 2, 1, "c2", "exec", {"argv": ["make"]})
    await store.close_attempt(opened, {"output": "[wrote]", "ok": True}, resolution="ran")
    done, running = await store.attempts(run_id, step=2)
    assert (done.id, done.seq, done.arguments) == (opened, 0, {"path": "a.txt"})
    assert done.intent == {"path": "a.txt", "sha256": "00", "output": "[wrote]"}
    assert done.result == {"output": "[wrote]", "ok": True} and done.completed_at is not None
    assert (running.id, running.intent, running.result, running.completed_at) == (
        still_open,
        None,
        None,
        None,
    )
    assert await store.attempts(run_id, step=3) == []


async def test_the_trace_tables_read_back_as_typed_rows(store: Store, run_id: int) -> None:
    await store.add_provider_call(
        run_id, 1, {"attempt": 1, "provider": "scripted", "model": "m-1", "failure": "transport"}
    )
    await store.add_gate_attempt(run_id, 1, "python check.py", "failed", "add is wrong")
    await store.add_sandbox_event(run_id, 1, "gate_exec", "portable-floor", "python check.py")
    await store.add_policy_event(
        run_id, 1, kind="refusal", act="read", target=".env", rule=".env", layer="builtin-secrets"
    )
    await store.add_events([(run_id, None, "step_started", {"step": 1, "run_id": run_id})])
    (attempt,) = await store.provider_calls(run_id)
    assert (attempt.attempt, attempt.failure, attempt.input_tokens, attempt.cost_usd) == (
        1,
        "transport",
        0,
        None,
    )
    (gate,) = await store.gate_attempts(run_id)
    assert (gate.step, gate.criterion, gate.status, gate.detail) == (
        1,
        "python check.py",
        "failed",
        "add is wrong",
    )
    (sandboxed,) = await store.sandbox_events(run_id)
    assert (sandboxed.kind, sandboxed.backend) == ("gate_exec", "portable-floor")
    (refusal,) = await store.policy_events(run_id)
    assert refusal.act is Act.READ and (refusal.kind, refusal.layer) == (
        "refusal",
        "builtin-secrets",
    )
    (event,) = await store.events(run_id)
    assert (event.kind, event.json) == ("step_started", {"step": 1, "run_id": run_id})


async def test_an_approval_reads_back_with_its_act_goal_and_remembered_rules(
    store: Store, run_id: int
) -> None:
    request_id = await store.create_approval(
        run_id, 1, {"call_id": "c1", "tool": "write_file", "act": "write", "target": "notes/a.md"}
    )
    pending = await store.approval(request_id)
    assert pending is not None and pending.act is Act.WRITE
    assert (pending.status, pending.goal, pending.remembered) == ("pending", "fix add", ())
    assert await store.resolve_approval(
        request_id, status="approve", by="queue", remembered=["write allow notes/*"]
    )
    (answered,) = await store.approvals(run_id)
    assert (answered.status, answered.decided_by) == ("approve", "queue")
    assert answered.remembered == ("write allow notes/*",)
    assert await store.approvals(pending_only=True) == []


async def test_the_first_schemas_store_reads_as_typed_rows(tmp_path: Path) -> None:
    fixture = Path(__file__).parents[2] / "fixtures" / "store-v1.db"
    copy = tmp_path / "old.db"
    copy.write_bytes(fixture.read_bytes())
    async with Store.open(copy) as store:
        (run,) = await store.runs()
        assert (run.status, run.outcome) == ("paused", "awaiting_approval")
        (message,) = await store.messages(run.id)
        # Written before tool calls kept an argument error: it reads as none.
        assert message.message.tool_calls == (
            ToolCall(
                "call_0_0",
                "edit_file",
                {"path": "calc.py", "old_text": "a - b", "new_text": "a + b"},
            ),
        )
        (pending,) = await store.approvals(run.id, pending_only=True)
        assert (pending.act, pending.target, pending.remembered) == (Act.WRITE, "calc.py", ())
        (attempt,) = await store.attempts(run.id)
        assert attempt.run_id == run.id
    with sqlite3.connect(copy) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


async def test_a_tool_result_s_images_read_back_whole(store: Store, run_id: int) -> None:
    image = Image("image/webp", bytes(range(256)) * 4, "shots/a.webp", 640, 480)
    shown = Message("tool", "[view_image shots/a.webp]", tool_call_id="c1", images=(image,))
    await store.commit_step(StepCommit(run_id, 1, "", "", 0, 0, None, [*MESSAGES[:2], shown], []))
    rows = await store.messages(run_id)
    assert rows[-1].message == shown
    assert [m.images for m in rows[:-1]] == [(), ()]


async def test_one_calls_images_are_read_alone_once_committed(store: Store, run_id: int) -> None:
    image = Image("image/png", b"\x89PNG" + bytes(60), "chart.png", 64, 32)
    shown = Message("tool", "[view_image chart.png]", tool_call_id="c2", images=(image,))
    assert await store.tool_images(run_id, 1, "c2") == ()  # not committed yet
    await store.commit_step(StepCommit(run_id, 1, "", "", 0, 0, None, [*MESSAGES, shown], []))
    assert await store.tool_images(run_id, 1, "c2") == (image,)
    assert await store.tool_images(run_id, 1, "c1") == ()  # a result without images
    assert await store.tool_images(run_id, 2, "c2") == ()


async def test_a_run_s_cost_is_its_steps_sum_or_none(store: Store, run_id: int) -> None:
    assert await store.run_cost(run_id) is None  # no step yet: no cost reported
    await _commit(store, run_id, 1)
    await _commit(store, run_id, 2)
    assert await store.run_cost(run_id) == 1.0

"""The loop end to end with a scripted model, a real store file, real tools and the real sandbox."""

from __future__ import annotations

from pathlib import Path

import pytest

from ioh_tui.core.events import TextDelta
from ioh_tui.engine import TaskContract, run
from ioh_tui.policy import ApproveAll, Policy
from ioh_tui.sandbox import select
from ioh_tui.store import Store
from ioh_tui.verification import NoGate
from tests.integration.engine.helpers import CHECK, FIX_CALC, READ_CALC, Recorder, scripted


async def test_reads_fixes_and_passes_the_gate(project: Path, tmp_path: Path) -> None:
    provider = scripted(
        {"text": "Looking at calc.py first.", "tool_calls": [READ_CALC]},
        {"thinking": "The sign is wrong.", "text": "Fixing the sign.", "tool_calls": [FIX_CALC]},
        {"text": "Done."},
    )
    seen = Recorder()
    async with Store.open(tmp_path / "trace.db") as store:
        result = await run(
            TaskContract.workspace("make add add", project, CHECK),
            provider,
            store=store,
            policy=Policy.permissive(),
            sandbox=select("floor"),
            observers=[seen],
        )
        assert (result.outcome, result.steps, result.exit_status) == ("success", 2, 0)
        assert "a + b" in (project / "calc.py").read_text()
        messages = await store.messages(result.run_id)
        gates = await store.gate_attempts(result.run_id)
        calls = await store.tool_calls(result.run_id)
        sandboxed = await store.sandbox_events(result.run_id)
    assert seen.kinds()[0] == "run_started" and seen.kinds()[-1] == "run_finished"
    for step in (1, 2):
        streamed = "".join(e.text for e in seen.of("text_delta") if e.step == step)
        stored = next(m.content for m in messages if m.step == step and m.role == "assistant")
        assert streamed == stored and stored
    assert "".join(e.text for e in seen.of("thinking_delta")) == "The sign is wrong."
    assert [g.status for g in gates] == ["failed", "passed"]
    # Each gate run is in the trace: what ran, under which backend, in the run's work directory.
    assert [e.kind for e in sandboxed] == [
        "workdir_created",
        "gate_exec",
        "gate_exec",
        "workdir_removed",
    ]
    assert {e.backend for e in sandboxed} == {"portable-floor"}
    assert all(e.detail.endswith("check_calc.py") for e in sandboxed[1:3])
    assert [c.name for c in calls] == ["read_file", "edit_file"]
    assert calls[0].output.startswith("[read calc.py]") and "a - b" in calls[0].output


async def test_a_gate_never_satisfied_stops_at_exactly_the_step_cap(project: Path) -> None:
    provider = scripted(*[{"tool_calls": [READ_CALC]}] * 10)
    async with Store.memory() as store:
        contract = TaskContract.workspace("never done", project, CHECK).with_max_steps(4)
        result = await run(contract, provider, store=store, sandbox=select("floor"))
        steps = await store.steps(result.run_id)
    assert (result.outcome, result.steps, result.exit_status) == ("step_cap_reached", 4, 3)
    assert len(steps) == 4 and len(provider.requests) == 4


async def test_token_budget_ends_cost_budget_exceeded(project: Path) -> None:
    turn = {"tool_calls": [READ_CALC], "usage": {"input_tokens": 600, "output_tokens": 100}}
    provider = scripted(*[turn] * 10)
    async with Store.memory() as store:
        contract = TaskContract.workspace("spend", project, CHECK).with_token_budget(1500)
        result = await run(contract, provider, store=store, sandbox=select("floor"))
    # 700 a step: after step 2, 100 of the 1,500 are left, and step 3's prompt alone (about 600,
    # as the provider's reports calibrate the count) would pass them, so it is never sent.
    assert (result.outcome, result.steps, result.tokens) == ("cost_budget_exceeded", 2, 1400)
    assert result.exit_status == 3 and len(provider.requests) == 2
    assert "the next request needs about" in result.detail


async def test_time_budget_ends_time_budget_exceeded(project: Path) -> None:
    provider = scripted(*[{"tool_calls": [READ_CALC], "delay_ms": 150}] * 20)
    async with Store.memory() as store:
        contract = TaskContract.workspace("slow", project, CHECK).with_time_budget(0.4)
        result = await run(contract, provider, store=store, sandbox=select("floor"))
    assert result.outcome == "time_budget_exceeded" and result.exit_status == 3
    # A step starts only while the run is under 0.4 s, and each takes at least 150 ms, so at most
    # three start (at 0, 150 and 300 ms at the earliest): a check one step late lets a fourth in.
    assert 1 <= result.steps <= 3
    assert len(provider.requests) == result.steps


async def test_no_criterion_finishes_when_the_model_stops_calling_tools(project: Path) -> None:
    provider = scripted({"tool_calls": [READ_CALC]}, {"text": "All read."})
    async with Store.memory() as store:
        result = await run(
            TaskContract.workspace("look", project, NoGate()),
            provider,
            store=store,
            sandbox=select("floor"),
        )
    assert (result.outcome, result.steps, result.exit_status) == ("finished", 2, 0)


async def test_a_refused_call_is_an_observation_and_costs_a_step(project: Path) -> None:
    provider = scripted(
        {"tool_calls": [{"name": "read_file", "arguments": {"path": ".env"}}]},
        {"tool_calls": [FIX_CALC]},
    )
    (project / ".env").write_text("TOKEN=secret-value-123\n")
    async with Store.memory() as store:
        result = await run(
            TaskContract.workspace("fix", project, CHECK),
            provider,
            store=store,
            approver=ApproveAll(),
            sandbox=select("floor"),
        )
        calls = await store.tool_calls(result.run_id)
    assert (result.outcome, result.steps) == ("success", 2)
    assert calls[0].refused and "builtin-secrets" in calls[0].output
    # The model read the refusal in its next request.
    assert any("[read refused] .env" in m.content for m in provider.requests[1].messages)


async def test_unknown_tools_and_bad_arguments_are_observations(project: Path) -> None:
    provider = scripted(
        {
            "tool_calls": [
                {"name": "teleport", "arguments": {}},
                {"name": "read_file", "arguments": {"nope": 1}},
            ]
        },
        {"text": "ok"},
    )
    async with Store.memory() as store:
        result = await run(
            TaskContract.workspace("x", project, NoGate()),
            provider,
            store=store,
            sandbox=select("floor"),
        )
        calls = await store.tool_calls(result.run_id)
    assert result.outcome == "finished"
    assert calls[0].output.startswith("[unknown tool teleport]")
    assert calls[1].output.startswith("[read_file error] missing required argument 'path'")


@pytest.mark.parametrize(
    "escape",
    ["../outside.txt", "sub/../../outside.txt", "/ABSOLUTE", "link/outside.txt", "filelink"],
)
async def test_escapes_are_refused_and_nothing_leaks(
    project: Path, tmp_path: Path, escape: str
) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("TOP-SECRET-BYTES\n")
    (project / "link").symlink_to(tmp_path)
    (project / "filelink").symlink_to(outside)
    path = str(outside) if escape == "/ABSOLUTE" else escape
    provider = scripted(
        {"tool_calls": [{"name": "read_file", "arguments": {"path": path}}]},
        {"tool_calls": [{"name": "write_file", "arguments": {"path": path, "content": "x"}}]},
        {"tool_calls": [FIX_CALC]},
    )
    seen = Recorder()
    db = tmp_path / "t.db"
    async with Store.open(db) as store:
        result = await run(
            TaskContract.workspace("fix", project, CHECK),
            provider,
            store=store,
            policy=Policy.permissive(),
            sandbox=select("floor"),
            observers=[seen],
        )
    assert result.outcome == "success" and result.steps == 3
    finished = seen.of("tool_call_finished")
    assert finished[0].refused and finished[1].refused
    assert outside.read_text() == "TOP-SECRET-BYTES\n"
    assert "TOP-SECRET" not in repr(seen.events)
    assert b"TOP-SECRET" not in _store_bytes(tmp_path)


async def test_grep_and_find_skip_denied_files_and_tool_dirs(project: Path) -> None:
    (project / ".env").write_text("needle=1\n")
    (project / "node_modules").mkdir()
    (project / "node_modules" / "x.py").write_text("needle\n")
    (project / "notes.py").write_text("needle here\n")
    provider = scripted(
        {
            "tool_calls": [
                {"name": "grep", "arguments": {"pattern": "needle"}},
                {"name": "find", "arguments": {"pattern": "*"}},
            ]
        },
        {"text": "done"},
    )
    async with Store.memory() as store:
        result = await run(
            TaskContract.workspace("x", project, NoGate()),
            provider,
            store=store,
            sandbox=select("floor"),
        )
        grep_out, find_out = (c.output for c in await store.tool_calls(result.run_id))
    assert "notes.py:1: needle here" in grep_out
    assert ".env" not in grep_out and "node_modules" not in grep_out
    assert ".env" not in find_out and "calc.py" in find_out


def _store_bytes(folder: Path) -> bytes:
    """The store file and its write-ahead log, if one remains."""
    return b"".join(f.read_bytes() for f in sorted(folder.iterdir()) if f.name.startswith("t.db"))


async def test_a_retry_that_would_outlast_the_time_budget_ends_the_run(project: Path) -> None:
    provider = scripted(
        {"tool_calls": [READ_CALC], "errors": [{"status": 429, "retry_after_s": 30}]}
    )
    async with Store.memory() as store:
        contract = TaskContract.workspace("wait", project, CHECK).with_time_budget(5)
        result = await run(contract, provider, store=store, sandbox=select("floor"))
        attempts = await store.provider_calls(result.run_id)
    assert (result.outcome, result.steps) == ("time_budget_exceeded", 0)
    assert "would outlast the time budget" in result.detail
    assert [a.failure for a in attempts] == ["rate_limited (HTTP 429)"]


async def test_a_retry_is_announced_before_the_retried_attempt_streams(project: Path) -> None:
    turn = {
        "text": "A fairly long answer that streams.",
        "tool_calls": [FIX_CALC],
        "errors": [{"disconnect_after_chunks": 2}],
    }
    seen = Recorder()
    async with Store.memory() as store:
        result = await run(
            TaskContract.workspace("fix", project, CHECK),
            scripted(turn),
            store=store,
            policy=Policy.permissive(),
            sandbox=select("floor"),
            observers=[seen],
        )
        attempts = await store.provider_calls(result.run_id)
    assert result.outcome == "success"
    kinds = [e.kind for e in seen.events if e.kind in ("text_delta", "retry", "usage")]
    retry = kinds.index("retry")
    assert kinds[:retry] == ["text_delta", "text_delta"] and kinds[-1] == "usage"
    since_retry = seen.events[seen.events.index(seen.of("retry")[0]) :]
    after = "".join(e.text for e in since_retry if isinstance(e, TextDelta))
    assert after == "A fairly long answer that streams."
    assert [a.failure for a in attempts] == ["transport", None]


async def test_a_flat_run_answers_a_spawn_call_once_as_an_unknown_tool(project: Path) -> None:
    provider = scripted(
        {"tool_calls": [{"name": "spawn_agent", "arguments": {"goal": "help"}}]},
        {"text": "alone, then"},
    )
    seen = Recorder()
    async with Store.memory() as store:
        result = await run(
            TaskContract.workspace("x", project, NoGate()),
            provider,
            store=store,
            sandbox=select("floor"),
            observers=[seen],
        )
    assert (result.outcome, result.steps) == ("finished", 2)
    [finished] = seen.of("tool_call_finished")
    assert finished.name == "spawn_agent" and not finished.ok
    assert finished.output.startswith("[unknown tool spawn_agent]")

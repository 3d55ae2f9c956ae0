"""Long unattended runs: a context that fits the window, stall detection, budgets before paying."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ioh_tui.core.errors import ConfigError
from ioh_tui.engine import RunResult, TaskContract, check_contract, resume, run
from ioh_tui.policy import Policy
from ioh_tui.providers import ScriptedProvider
from ioh_tui.sandbox import select
from ioh_tui.store import Store
from ioh_tui.verification import Command, NoGate
from tests.integration.engine.helpers import CHECK, READ_CALC, Recorder, scripted


async def permissive(
    contract: TaskContract, provider: ScriptedProvider, store: Store, seen: Recorder
) -> RunResult:
    """Run with every act allowed, on the floor sandbox, every event kept."""
    return await run(
        contract,
        provider,
        store=store,
        policy=Policy.permissive(),
        sandbox=select("floor"),
        observers=[seen],
    )


async def test_identical_calls_are_warned_once_then_end_stalled(project: Path) -> None:
    provider = scripted(*[{"tool_calls": [READ_CALC]}] * 25)
    contract = TaskContract.workspace("never done", project, CHECK).with_max_steps(25)
    async with Store.memory() as store:
        result = await run(contract, provider, store=store, sandbox=select("floor"))
        messages = await store.messages(result.run_id)
    assert (result.outcome, result.steps, result.exit_status) == ("stalled", 10, 1)
    assert "repeated itself" in result.detail
    warnings = [m for m in messages if "Change your approach" in m.content]
    assert len(warnings) == 1 and warnings[0].content.startswith("[step 5]")
    # The warning reached the model with the step after it.
    assert "Change your approach" in provider.requests[5].messages[-1].content


async def test_a_stall_budget_of_zero_never_stalls(project: Path) -> None:
    provider = scripted(*[{"tool_calls": [READ_CALC]}] * 12)
    contract = (
        TaskContract.workspace("never done", project, CHECK).with_max_steps(12).with_stall_after(0)
    )
    async with Store.memory() as store:
        result = await run(contract, provider, store=store, sandbox=select("floor"))
    assert (result.outcome, result.steps) == ("step_cap_reached", 12)


async def test_steps_without_a_tool_call_while_the_gate_fails_end_stalled(project: Path) -> None:
    provider = scripted(*[{"text": "I think it is fine."}] * 10)
    contract = (
        TaskContract.workspace("never done", project, CHECK).with_max_steps(10).with_stall_after(3)
    )
    async with Store.memory() as store:
        result = await run(contract, provider, store=store, sandbox=select("floor"))
    assert (result.outcome, result.steps) == ("stalled", 6)


async def test_a_long_run_is_compacted_to_fit_its_window(project: Path) -> None:
    for i in range(150):
        (project / f"notes{i:03d}.txt").write_text(
            f"note {i:03d}\n" + "words and more words " * 100
        )
    reads = [
        {"tool_calls": [{"name": "read_file", "arguments": {"path": f"notes{i:03d}.txt"}}]}
        for i in range(150)
    ]
    provider = scripted(*reads, {"text": "done"})
    seen = Recorder()
    contract = (
        TaskContract.workspace("read them all", project, NoGate())
        .with_max_steps(151)
        .with_context_window(6_000)
    )
    async with Store.memory() as store:
        result = await permissive(contract, provider, store, seen)
        summaries = await store.summaries(result.run_id)
        calls = await store.provider_calls(result.run_id)
        steps = await store.steps(result.run_id)
    assert (result.outcome, result.steps) == ("finished", 151)
    prompts = [e.input_tokens for e in seen.of("usage")]
    # No request passes the window; about a quarter of it stays free for the answer (the count is
    # an estimate calibrated by the model's reports, so it may pass its limit by a little).
    assert max(prompts) <= 6_000 * 0.8
    # Bounded, not growing.
    assert max(prompts[100:]) <= max(prompts[30:100]) + 8
    # Each compaction is an event, a stored summary and an accounted call charged to its step.
    compacted = seen.of("context_compacted")
    assert compacted and len(compacted) == len(summaries)
    assert all(e.tokens_after < e.tokens_before for e in compacted)
    assert [s.turns for s in summaries] == sorted({s.turns for s in summaries})
    assert len(calls) == 151 + len(summaries)
    assert sum(c.input_tokens + c.output_tokens for c in calls) == sum(s.tokens for s in steps)
    # The last request: the pinned part, the latest summary (saying how many turns it stands
    # for), then whole recent turns; the scripted model counted its way to the right turn.
    last = provider.requests[-1].messages
    assert last[0].role == "system" and last[1].content.startswith("Goal: read them all")
    assert last[2].content.startswith(f"[earlier work, summarised: {summaries[-1].turns} turn(s)]")
    assert summaries[-1].turns + sum(1 for m in last if m.role == "assistant") == 150


async def test_a_context_overflow_is_recovered_by_refitting_and_asking_again(
    project: Path,
) -> None:
    # The model's real window (3,000) is far smaller than the one the run was told (20,000).
    for i in range(12):
        (project / f"big{i}.txt").write_text("x" * 3_000)
    reads = [
        {"tool_calls": [{"name": "read_file", "arguments": {"path": f"big{i}.txt"}}]}
        for i in range(12)
    ]
    provider = scripted(*reads, {"text": "done"}, context_window=3_000)
    contract = (
        TaskContract.workspace("read", project, NoGate())
        .with_max_steps(13)
        .with_context_window(20_000)
    )
    seen = Recorder()
    async with Store.memory() as store:
        result = await permissive(contract, provider, store, seen)
        calls = await store.provider_calls(result.run_id)
    assert (result.outcome, result.steps) == ("finished", 13)
    refused = [c for c in calls if c.failure is not None]
    assert refused and all((c.failure or "").startswith("context_overflow") for c in refused)
    assert seen.of("context_compacted")


async def test_a_pinned_part_larger_than_the_window_ends_failed_saying_so(project: Path) -> None:
    provider = scripted({"text": "never asked"}, context_window=1_000)
    contract = TaskContract.workspace("y" * 8_000, project, NoGate()).with_context_window(1_500)
    async with Store.memory() as store:
        result = await run(contract, provider, store=store, sandbox=select("floor"))
    assert (result.outcome, result.steps, result.exit_status) == ("failed", 0, 1)
    assert "cannot fit the model's window" in result.detail and provider.requests == []


async def test_notes_are_pinned_every_turn_and_outlive_compaction_and_resume(
    project: Path, tmp_path: Path
) -> None:
    for i in range(40):
        (project / f"part{i:02d}.txt").write_text(f"part {i:02d}\n" + "lorem ipsum " * 250)
    note = {"name": "note", "arguments": {"text": "calc.py subtracts; the fix is in add()"}}
    reads = [
        {"tool_calls": [{"name": "read_file", "arguments": {"path": f"part{i:02d}.txt"}}]}
        for i in range(40)
    ]
    turns: list[dict[str, Any]] = [{"tool_calls": [note]}, *reads, {"text": "done"}]
    contract = (
        TaskContract.workspace("survey", project, NoGate())
        .with_max_steps(20)
        .with_context_window(5_000)
    )
    seen = Recorder()
    first = scripted(*turns)
    async with Store.open(tmp_path / "trace.db") as store:
        capped = await run(
            contract,
            first,
            store=store,
            policy=Policy.permissive(),
            sandbox=select("floor"),
            observers=[seen],
        )
        again = scripted(*turns)
        resumed = await resume(
            capped.run_id,
            again,
            store=store,
            policy=Policy.permissive(),
            sandbox=select("floor"),
            overrides={"max_steps": 42},
        )
        summaries = await store.summaries(capped.run_id)
    assert (capped.outcome, resumed.outcome, resumed.steps) == ("step_cap_reached", "finished", 42)
    [added] = seen.of("note_added")
    assert (added.step, added.text) == (1, "calc.py subtracts; the fix is in add()")
    assert len(summaries) >= 2  # compacted before and after the resume
    pinned = "Your notes (kept with the run"
    asked = [
        r
        for r in [*first.requests[1:], *again.requests]
        if not r.messages[0].content.startswith("You compact")  # a summarising call
    ]
    for request in asked:
        notes = request.messages[2]
        assert notes.content.startswith(pinned) and "- calc.py subtracts" in notes.content
    # The resumed drive started from the stored summary: it asked for no summary of turns that
    # were already summarised.
    assert len({s.turns for s in summaries}) == len(summaries)
    resumed_first = next(r for r in again.requests if r in asked)
    assert resumed_first.messages[3].content.startswith("[earlier work, summarised:")


async def test_a_gate_that_cannot_run_ends_the_run_failed_at_once(project: Path) -> None:
    gate = project / "gate.sh"
    gate.write_text("#!/bin/sh\nexit 1\n")
    gate.chmod(0o755)
    remove = {"name": "exec", "arguments": {"argv": ["rm", "gate.sh"]}}
    provider = scripted({"tool_calls": [remove]}, *[{"tool_calls": [READ_CALC]}] * 5)
    contract = TaskContract.workspace("x", project, Command(["./gate.sh"])).with_max_steps(6)
    async with Store.memory() as store:
        result = await permissive(contract, provider, store, Recorder())
        gates = await store.gate_attempts(result.run_id)
    assert (result.outcome, result.steps, result.exit_status) == ("failed", 1, 1)
    assert "could not be checked" in result.detail and [g.status for g in gates] == ["errored"]


def test_a_gate_whose_program_is_missing_is_refused_before_the_run(project: Path) -> None:
    with pytest.raises(ConfigError, match="'nope-not-here' is not found"):
        check_contract(TaskContract.workspace("x", project, Command(["nope-not-here"])))
    with pytest.raises(ConfigError, match=r"'\./check_calc\.py' is not found"):  # not executable
        check_contract(TaskContract.workspace("x", project, Command(["./check_calc.py"])))
    check_contract(TaskContract.workspace("x", project, CHECK))

"""The agent loop: ask the model once, run its tool calls in order, commit, check the stops.

Stop conditions, in this fixed order. Before each step: cancelled, time budget, (the step cap ends
the loop). After each step: cancelled, paused on a deferred decision, token budget, finished (no
criterion and no tool call), success (the criterion passes). After the last step: step cap.
Budgets a supervisor raised mid-run (`raises.py`) are taken before each budget check.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable

from ioh_tui.core import events as ev
from ioh_tui.core.errors import ProviderError
from ioh_tui.core.outcomes import Outcome
from ioh_tui.core.transcript import (
    Attempt,
    Completion,
    Message,
    Request,
    StreamPiece,
    TextPiece,
    ThinkingPiece,
    ToolCall,
)
from ioh_tui.engine.cancel import RunCancelled
from ioh_tui.engine.contract import RunResult
from ioh_tui.engine.dispatch import dispatch_call, tool_row
from ioh_tui.engine.gate import Preset
from ioh_tui.engine.gatework import traced
from ioh_tui.engine.ids import WhoFields
from ioh_tui.engine.prompts import no_tool_call, system_prompt, task_block
from ioh_tui.engine.raises import apply_raises, apply_tree_raise
from ioh_tui.engine.state import Drive
from ioh_tui.providers.retry import BudgetExhausted
from ioh_tui.store import CallRecord, StepCommit
from ioh_tui.tools import ToolResult
from ioh_tui.tools.registry import SPAWN_AGENT
from ioh_tui.verification import NoGate


class Stop(Exception):
    """Ends the drive with an outcome (control flow by exception, as the house style allows)."""

    def __init__(
        self, outcome: Outcome, steps: int, detail: str = "", request_id: int | None = None
    ) -> None:
        super().__init__(outcome)
        self.outcome = outcome
        self.steps = steps
        self.detail = detail
        self.request_id = request_id


async def drive(d: Drive, start: int) -> RunResult:
    """Run steps `start..max_steps`; return how the run ended (already recorded in the store)."""
    d.first_step = start
    try:
        n = start
        while True:
            await apply_raises(d)  # the cap is read each time round: it may have been raised
            if n > d.contract.max_steps:
                raise Stop("step_cap_reached", d.contract.max_steps)
            await _before_step(d, n)
            await step(d, n)
            n += 1
    except Stop as stop:
        return await finish(d, stop)
    except RunCancelled as exc:
        return await finish(d, Stop("cancelled", await d.store.last_step(d.run_id), str(exc)))


async def recheck_then_drive(d: Drive, start: int) -> RunResult:
    """Resume a crashed drive: the checks a crash cut, then the steps from `start`.

    The checks are those after the last committed step (the gate among them).
    """
    last = next((m for m in reversed(d.history) if m.role == "assistant"), None)
    try:
        await after_step(d, start - 1, called=bool(last and last.tool_calls), changed=True)
    except Stop as stop:
        return await finish(d, stop)
    return await drive(d, start)


async def _before_step(d: Drive, n: int) -> None:
    if d.cancel.cancelled:
        raise Stop("cancelled", n - 1, d.cancel.reason)
    if d.tree is not None and d.tree.halt_reason is not None:
        raise Stop("cost_budget_exceeded", n - 1, d.tree.halt_reason)
    budget = d.contract.time_budget_s
    if budget is not None and await d.store.elapsed_s(d.run_id) > budget:
        raise Stop("time_budget_exceeded", n - 1, f"the {budget:g}s time budget is spent")


async def step(d: Drive, n: int) -> None:
    """One step: query, execute, commit, check."""
    d.bus.emit(ev.StepStarted(**_who(d), step=n))
    # Reports of detached children that finished since the last step reach the model now.
    inbox = d.tree.reports(d) if d.tree is not None else []
    d.history.extend(inbox)
    # Only the first step of a drive can have been staged by a drive that crashed.
    staged = await d.store.staged_turn(d.run_id, n) if n == d.first_step else None
    if staged is None:
        completion = await query(d, n)
        await d.store.stage_turn(d.run_id, n, completion)
    else:
        completion = staged
        _replay_text(d, n, completion)
    assistant = Message("assistant", completion.text, completion.tool_calls)
    results, rows, deferred, changed = await execute_tools(d, n, completion.tool_calls)
    messages = [*inbox, assistant, *results]
    if not completion.tool_calls and not isinstance(d.contract.verification, NoGate):
        messages.append(Message("user", no_tool_call(n)))
    usage = completion.usage
    step_tokens = usage.total_tokens if usage else 0
    await d.store.commit_step(
        StepCommit(
            run_id=d.run_id,
            step=n,
            decision="; ".join(r.summary for r in rows)
            or ("no tool call" if not completion.tool_calls else ""),
            tool_call=" | ".join(
                f"{c.name}:{json.dumps(dict(c.arguments), sort_keys=True)}"
                for c in completion.tool_calls
            ),
            input_tokens=usage.input_tokens if usage else 0,
            output_tokens=usage.output_tokens if usage else 0,
            cost_usd=usage.cost_usd if usage else None,
            messages=messages,
            tool_calls=rows,
            lease_owner=d.lease_owner,
            lease_generation=d.lease_generation,
        )
    )
    d.history.extend(messages[len(inbox) :])
    d.tokens += step_tokens
    d.bus.emit(
        ev.StepFinished(
            **_who(d), step=n, tokens=step_tokens, total_tokens=d.tokens, tool_calls=len(rows)
        )
    )
    if deferred is not None:
        raise Stop("awaiting_approval", n, "a decision was deferred", request_id=deferred)
    if d.tree is not None:
        await apply_tree_raise(d)
        halted = d.tree.draw(step_tokens)
        d.tree.status(d)
        if halted is not None:
            raise Stop("cost_budget_exceeded", n, halted)
    await after_step(d, n, called=bool(completion.tool_calls), changed=changed)


def _replay_text(d: Drive, n: int, completion: Completion) -> None:
    """Show a staged turn's text again (it was streamed by the drive that crashed)."""
    if completion.thinking:
        d.bus.emit(ev.ThinkingDelta(**_who(d), step=n, text=completion.thinking))
    if completion.text:
        d.bus.emit(ev.TextDelta(**_who(d), step=n, text=completion.text))


async def after_step(d: Drive, n: int, *, called: bool, changed: bool) -> None:
    """The stop checks after a committed step (also after a resumed decision completes one)."""
    if d.cancel.cancelled:
        raise Stop("cancelled", n, d.cancel.reason)
    await apply_raises(d)
    budget = d.contract.token_budget
    if budget is not None and d.tokens > budget:
        raise Stop("cost_budget_exceeded", n, f"{d.tokens:,} tokens used of a {budget:,} budget")
    criterion = d.contract.verification
    if isinstance(criterion, NoGate):
        if not called:
            raise Stop("finished", n)
        return
    if d.gate_checked and not changed:
        return
    d.gate_checked = True
    d.bus.emit(ev.VerificationStarted(**_who(d), criterion=criterion.describe(), step=n))
    # Gate commands get the run's scratch directory, and each of them is traced as it ends.
    scratch = await d.gate_work.open(d, n) if criterion.runs_commands else None
    outcome = await d.cancel.guard(
        criterion.evaluate(d.contract.root, d.contract.subject, traced(d, n), scratch=scratch)
    )
    detail = outcome.detail
    if outcome.result is not None and outcome.status != "passed":
        tail = (outcome.result.stdout + outcome.result.stderr)[-2000:]
        detail = f"{detail}\n{tail}" if tail else detail
    await d.store.add_gate_attempt(d.run_id, n, criterion.describe(), outcome.status, detail)
    d.bus.emit(ev.VerificationFinished(**_who(d), status=outcome.status, detail=detail, step=n))
    if outcome:
        raise Stop("success", n)


async def query(d: Drive, n: int) -> Completion:
    """Ask the model once (with the provider's retries), streaming pieces as events."""
    request = Request(
        (
            Message("system", system_prompt(d.contract)),
            Message("user", task_block(d.contract, project=d.project)),
            *d.history,
        ),
        tools=d.tools.specs,
    )

    def on_piece(piece: StreamPiece) -> None:
        if isinstance(piece, TextPiece) and piece.text:
            d.bus.emit(ev.TextDelta(**_who(d), step=n, text=piece.text))
        elif isinstance(piece, ThinkingPiece) and piece.text:
            d.bus.emit(ev.ThinkingDelta(**_who(d), step=n, text=piece.text))

    pending: list[Attempt] = []

    def on_attempt(attempt: Attempt) -> None:
        pending.append(attempt)
        if attempt.retry_in_s is not None:
            # Announced at once: it voids the text this failed attempt streamed (the app clears it).
            d.bus.emit(
                ev.RetryScheduled(
                    **_who(d),
                    step=n,
                    attempt=attempt.attempt,
                    error_kind=attempt.failure or "",
                    delay_ms=int(attempt.retry_in_s * 1000),
                )
            )

    deadline = None
    if d.contract.time_budget_s is not None:
        remaining = d.contract.time_budget_s - await d.store.elapsed_s(d.run_id)
        deadline = time.monotonic() + max(0.0, remaining)
    try:
        completion = await d.cancel.guard(
            d.provider.complete(
                request, on_piece=on_piece, on_attempt=on_attempt, deadline=deadline
            )
        )
    except BudgetExhausted as exc:
        await _account(d, n, pending)
        raise Stop("time_budget_exceeded", n - 1, str(exc)) from None
    except ProviderError as exc:
        await _account(d, n, pending)
        raise Stop("failed", n - 1, f"provider error: {exc}") from None
    await _account(d, n, pending)
    usage = completion.usage
    d.bus.emit(
        ev.UsageReported(
            **_who(d),
            step=n,
            input_tokens=usage.input_tokens if usage else 0,
            output_tokens=usage.output_tokens if usage else 0,
            ttft_ms=completion.ttft_ms,
            latency_ms=completion.latency_ms,
            cost_usd=usage.cost_usd if usage else None,
            cache_read_tokens=usage.cache_read_tokens if usage else 0,
        )
    )
    return completion


async def _account(d: Drive, n: int, attempts: list[Attempt]) -> None:
    """One accounting row per attempt."""
    for a in attempts:
        u = a.usage
        await d.store.add_provider_call(
            d.run_id,
            n,
            {
                "attempt": a.attempt,
                "provider": a.provider,
                "model": a.model,
                "input_tokens": u.input_tokens if u else 0,
                "output_tokens": u.output_tokens if u else 0,
                "cache_read_tokens": u.cache_read_tokens if u else 0,
                "cache_write_tokens": u.cache_write_tokens if u else 0,
                "reasoning_tokens": u.reasoning_tokens if u else 0,
                "cost_usd": u.cost_usd if u else None,
                "latency_ms": a.latency_ms,
                "ttft_ms": a.ttft_ms,
                "stop_reason": a.stop_reason,
                "failure": a.failure,
            },
        )
    attempts.clear()


async def execute_tools(
    d: Drive, n: int, calls: tuple[ToolCall, ...], *, first: int = 0, preset: Preset | None = None
) -> tuple[list[Message], list[CallRecord], int | None, bool]:
    """Dispatch calls in the model's order; stop at the first deferred decision.

    Returns the tool-result messages, the rows for the trace, the deferred request id (if any) and
    whether the workspace changed.
    """
    done: list[tuple[ToolCall, ToolResult | Awaitable[ToolResult]]] = []
    deferred = None
    for position in range(first, len(calls)):
        call = calls[position]
        if call.name == SPAWN_AGENT and d.tree is not None:
            # Every spawn of a step starts at once (slots permitting); reports fold back in order.
            d.bus.emit(
                ev.ToolCallStarted(
                    **_who(d),
                    step=n,
                    call_id=call.id,
                    name=call.name,
                    arguments=dict(call.arguments),
                )
            )
            done.append((call, d.tree.spawn(d, n, position, call)))
            continue
        result = await dispatch_call(d, n, position, call, preset if position == first else None)
        if result.deferred is not None:
            deferred = result.deferred
            break
        done.append((call, result))
    results: list[Message] = []
    rows: list[CallRecord] = []
    changed = False
    for call, pending in done:
        result = pending if isinstance(pending, ToolResult) else await d.cancel.guard(pending)
        if call.name == SPAWN_AGENT:
            d.bus.emit(
                ev.ToolCallFinished(
                    **_who(d),
                    step=n,
                    call_id=call.id,
                    name=call.name,
                    ok=result.ok,
                    refused=result.refused,
                    summary=result.summary,
                    output=result.output,
                )
            )
            changed = True  # a child may have changed the workspace
        changed = changed or result.changed
        results.append(Message("tool", result.output, tool_call_id=call.id))
        rows.append(tool_row(call, result))
    return results, rows, deferred, changed


async def finish(d: Drive, stop: Stop) -> RunResult:
    """Record the outcome, announce it, and build the result."""
    if d.tree is not None:
        await d.tree.drain(d)
    status = "paused" if stop.outcome == "awaiting_approval" else "completed"
    await d.store.finish_run(d.run_id, status=status, outcome=stop.outcome, detail=stop.detail)
    steps = await d.store.last_step(d.run_id)
    d.bus.emit(
        ev.RunFinished(
            **_who(d), outcome=stop.outcome, steps=steps, tokens=d.tokens, detail=stop.detail
        )
    )
    return RunResult(
        stop.outcome,
        d.run_id,
        steps,
        d.tokens,
        stop.detail,
        tuple(r.describe() for r in d.gate.remembered),
        stop.request_id,
    )


def _who(d: Drive) -> WhoFields:
    return d.who.fields()

"""The agent loop: ask the model once, run its tool calls in order, commit, check the stops.

Stop conditions, in this fixed order. Before each step: cancelled, time budget, (the step cap ends
the loop). After each step: cancelled, paused on a deferred decision, token budget, finished (no
criterion and no tool call), success (the criterion passes). After the last step: step cap.
Budgets a supervisor raised mid-run (`budgets.py`) are taken before each budget check.

Two ways in: `drive` (a new run, or a resumed one from its next step) and `resume_step` (a run
paused on a decision: the paused step is finished first). Both end in `finish`. (Just over 400
lines: the paused step's completion shares the tail of `step`, so it reads best beside it.)
"""

from __future__ import annotations

import json
from collections.abc import Awaitable

from ioh_tui.core import events as ev
from ioh_tui.core.control import RunCancelled, Stop
from ioh_tui.core.errors import ResumeError
from ioh_tui.core.transcript import (
    Completion,
    Message,
    ToolCall,
)
from ioh_tui.engine.ask import billed, prepare, query
from ioh_tui.engine.budgets import apply_raises
from ioh_tui.engine.contract import RunResult, TaskContract
from ioh_tui.engine.decide import Preset, request_from_row
from ioh_tui.engine.dispatch import dispatch_call, tool_row
from ioh_tui.engine.gatework import traced
from ioh_tui.engine.hooked import kept_going, notified_end
from ioh_tui.engine.ids import WhoFields
from ioh_tui.engine.prompts import no_tool_call
from ioh_tui.engine.session import held_below
from ioh_tui.engine.stall import Verdict, replan_message
from ioh_tui.engine.state import FLAT, Deps, RunState
from ioh_tui.policy import Decision
from ioh_tui.store import ApprovalRow, CallRecord, StepCommit
from ioh_tui.tools import ToolResult
from ioh_tui.tools.note import NOTE
from ioh_tui.verification import NoGate


async def drive(p: Deps, s: RunState, start: int, *, recheck: bool = False) -> RunResult:
    """Run steps `start..max_steps`; return how the run ended (already recorded in the store).

    `recheck`: a crashed drive is resumed, so first the checks the crash may have cut after the
    last committed step (the gate among them).
    """
    s.first_step = start
    await prepare(p, s)
    try:
        if recheck and await _judged_failing(p, start - 1):
            # The gate judged the last committed step before the crash. Judging it again now
            # would see what the next, uncommitted step already wrote, and could end the run a
            # step early with a change no committed step records.
            s.gate_checked = True
        elif recheck:
            last = next((m for m in reversed(s.history) if m.role == "assistant"), None)
            await after_step(p, s, start - 1, called=bool(last and last.tool_calls), changed=True)
        n = start
        while True:
            s.contract = await _raised(p, s)  # the cap is read each time round: it may have risen
            if n > s.contract.max_steps:
                raise Stop("step_cap_reached", s.contract.max_steps)
            await _before_step(p, s, n)
            await step(p, s, n)
            n += 1
    except Stop as stop:
        return await finish(p, s, stop)
    except RunCancelled as exc:
        return await finish(p, s, Stop("cancelled", await p.store.last_step(p.run_id), str(exc)))


async def resume_step(
    p: Deps, s: RunState, pending: ApprovalRow, decision: Decision | None
) -> RunResult:
    """Resume a paused step: perform or refuse exactly the deferred act, finish the step, go on.

    The rest of the step's calls run as `step` runs them, and the step ends with the same checks.
    """
    n = pending.step
    assistant = next((m for m in reversed(s.history) if m.role == "assistant"), None)
    calls = assistant.tool_calls if assistant is not None else ()
    position = next((i for i, c in enumerate(calls) if c.id == pending.call_id), None)
    if position is None:
        raise ResumeError(f"request {pending.id} does not match the paused step's tool calls")
    try:
        if decision is None:
            decision = await p.cancel.guard(
                p.approver.decide(request_from_row(pending, s.contract.goal))
            )
        if decision.kind == "defer":
            raise Stop("awaiting_approval", n, "the decision is still deferred", pending.id)
        preset = Preset(pending.act, pending.target, decision, pending.id, by="resumed")
        results, rows, deferred, changed = await execute_tools(
            p, s, n, calls, first=position, preset=preset
        )
        await p.store.append_to_step(p.run_id, n, results, rows)
        s.history.extend(results)
        # The step's tokens were charged when it was committed, before it paused.
        await _close_step(p, s, n, deferred, called=True, changed=changed, tokens=None)
    except Stop as stop:
        return await finish(p, s, stop)
    except RunCancelled as exc:
        return await finish(p, s, Stop("cancelled", n, str(exc)))
    return await drive(p, s, n + 1)


async def _judged_failing(p: Deps, n: int) -> bool:
    """Whether the gate's last verdict on step `n` was recorded, and was `failed`."""
    verdicts = [g.status for g in await p.store.gate_attempts(p.run_id) if g.step == n]
    return bool(verdicts) and verdicts[-1] == "failed"


async def _raised(p: Deps, s: RunState) -> TaskContract:
    return await apply_raises(
        p.raises, s.contract, store=p.store, run_id=p.run_id, bus=p.bus, who=p.who
    )


async def _before_step(p: Deps, s: RunState, n: int) -> None:
    if p.cancel.cancelled:
        raise Stop("cancelled", n - 1, p.cancel.reason)
    if (halted := p.spawner.halt_reason) is not None:
        raise Stop("cost_budget_exceeded", n - 1, halted)
    budget = s.contract.time_budget_s
    if budget is not None and await p.store.elapsed_s(p.run_id) > budget:
        raise Stop("time_budget_exceeded", n - 1, f"the {budget:g}s time budget is spent")


async def step(p: Deps, s: RunState, n: int) -> None:
    """One step: query, execute, commit, check."""
    p.bus.emit(ev.StepStarted(**_who(p), step=n))
    # Reports of detached children that finished since the last step reach the model now.
    inbox = p.spawner.reports(p.run_id)
    s.history.extend(inbox)
    # Only the first step of a drive can have been staged by a drive that crashed.
    staged = await p.store.staged_turn(p.run_id, n) if n == s.first_step else None
    if staged is None:
        completion, calls = await query(p, s, n)
        # The turn and its accounting in one transaction: one hop, and kept or lost together.
        await p.store.stage_turn(p.run_id, n, completion, calls, p.bus.take_logged())
    else:
        completion = staged
        _replay_text(p, n, completion)
    assistant = Message(
        "assistant", completion.text, completion.tool_calls, thoughts=completion.thoughts
    )
    results, rows, deferred, changed = await execute_tools(p, s, n, completion.tool_calls)
    messages = [*inbox, assistant, *results]
    if not completion.tool_calls and not isinstance(s.contract.verification, NoGate):
        messages.append(Message("user", no_tool_call(n)))
    decided = "; ".join(r.summary for r in rows)
    signature = " | ".join(
        f"{c.name}:{json.dumps(dict(c.arguments), sort_keys=True)}" for c in completion.tool_calls
    )
    verdict = s.progress.step(signature, changed=changed) if deferred is None else Verdict.FINE
    if verdict is Verdict.REPLAN:
        messages.append(Message("user", replan_message(n, s.progress.window, decided)))
    usage = billed(s, completion.usage)
    step_tokens = usage.total_tokens if usage else 0
    await p.store.commit_step(
        StepCommit(
            run_id=p.run_id,
            step=n,
            decision=decided or ("no tool call" if not completion.tool_calls else ""),
            tool_call=signature,
            input_tokens=usage.input_tokens if usage else 0,
            output_tokens=usage.output_tokens if usage else 0,
            cost_usd=usage.cost_usd if usage else None,
            messages=messages,
            tool_calls=rows,
            lease_owner=s.lease.owner if s.lease else None,
            lease_generation=s.lease.generation if s.lease else None,
        ),
        p.bus.take_logged(),  # the log's events ride along: no round trip of their own
    )
    s.history.extend(messages[len(inbox) :])
    s.tokens += step_tokens
    _keep_notes(p, s, n, rows)
    p.bus.emit(
        ev.StepFinished(
            **_who(p), step=n, tokens=step_tokens, total_tokens=s.tokens, tool_calls=len(rows)
        )
    )
    if verdict is Verdict.REPLAN:
        p.bus.emit(
            ev.StallWarned(
                **_who(p),
                step=n,
                detail=f"repeated or idle for {s.progress.window} steps; told to change approach",
            )
        )
    await _close_step(
        p, s, n, deferred, called=bool(completion.tool_calls), changed=changed, tokens=step_tokens
    )
    if verdict is Verdict.STALLED:
        raise Stop(
            "stalled",
            n,
            f"the agent repeated itself for {s.progress.window} steps after being told to change "
            "its approach",
        )


def _keep_notes(p: Deps, s: RunState, n: int, rows: list[CallRecord]) -> None:
    """Keep the notes the step's `note` calls made (pinned from the next turn on)."""
    for row in rows:
        if row.name == NOTE and row.ok:
            text = str(row.arguments["text"]).strip()
            s.notes.append(text)
            p.bus.emit(ev.NoteAdded(**_who(p), step=n, text=text))


async def _close_step(
    p: Deps,
    s: RunState,
    n: int,
    deferred: int | None,
    *,
    called: bool,
    changed: bool,
    tokens: int | None,
) -> None:
    """The tail of every committed step: a deferred decision pauses, then the stop checks.

    The tree is charged `tokens` first (None: they were charged already).
    """
    if deferred is not None:
        raise Stop("awaiting_approval", n, "a decision was deferred", request_id=deferred)
    if tokens is not None and (halted := await p.spawner.charge(tokens)) is not None:
        raise Stop("cost_budget_exceeded", n, halted)
    await after_step(p, s, n, called=called, changed=changed)


def _replay_text(p: Deps, n: int, completion: Completion) -> None:
    """Show a staged turn's text again (it was streamed by the drive that crashed)."""
    if completion.thinking:
        p.bus.emit(ev.ThinkingDelta(**_who(p), step=n, text=completion.thinking))
    if completion.text:
        p.bus.emit(ev.TextDelta(**_who(p), step=n, text=completion.text))


async def after_step(p: Deps, s: RunState, n: int, *, called: bool, changed: bool) -> None:
    """The stop checks after a committed step (also after a resumed decision completes one)."""
    if p.cancel.cancelled:
        raise Stop("cancelled", n, p.cancel.reason)
    s.contract = await _raised(p, s)
    budget = s.contract.token_budget
    if budget is not None and s.tokens > budget:
        raise Stop("cost_budget_exceeded", n, f"{s.tokens:,} tokens used of a {budget:,} budget")
    criterion = s.contract.verification
    if isinstance(criterion, NoGate):
        if not called and not await kept_going(p, s, n, "finished", None):
            raise Stop("finished", n)
        return
    if s.gate_checked and not changed:
        return
    s.gate_checked = True
    p.bus.emit(ev.VerificationStarted(**_who(p), criterion=criterion.describe(), step=n))
    # Gate commands get the run's scratch directory, and each of them is traced as it ends.
    scratch = (
        await p.gate_work.open(p.store, p.run_id, p.sandbox.backend, n)
        if criterion.runs_commands
        else None
    )
    sandbox = traced(p.sandbox, p.store, p.run_id, n)
    outcome = await p.cancel.guard(
        criterion.evaluate(s.contract.root, s.contract.subject, sandbox, scratch=scratch)
    )
    detail = outcome.detail
    if outcome.result is not None and outcome.status != "passed":
        tail = (outcome.result.stdout + outcome.result.stderr)[-2000:]
        detail = f"{detail}\n{tail}" if tail else detail
    detail = p.bus.redactor.text(detail)  # the gate's output can print a key as any command can
    await p.store.add_gate_attempt(p.run_id, n, criterion.describe(), outcome.status, detail)
    p.bus.emit(ev.VerificationFinished(**_who(p), status=outcome.status, detail=detail, step=n))
    if outcome:
        gate = {"criterion": criterion.describe(), "status": outcome.status, "detail": detail}
        if await kept_going(p, s, n, "success", gate):
            s.gate_checked = False  # the run goes on: the criterion is judged again after it
            return
        raise Stop("success", n)
    if outcome.status == "errored":
        # The gate could not judge (its program would not start): every later step would pay
        # to learn the same, so the run ends here.
        raise Stop("failed", n, f"the success criterion could not be checked: {detail}")


async def execute_tools(
    p: Deps,
    s: RunState,
    n: int,
    calls: tuple[ToolCall, ...],
    *,
    first: int = 0,
    preset: Preset | None = None,
) -> tuple[list[Message], list[CallRecord], int | None, bool]:
    """Dispatch calls in the model's order; stop at the first deferred decision.

    Returns the tool-result messages, the rows for the trace, the deferred request id (if any) and
    whether the workspace changed.
    """
    done: list[tuple[ToolCall, ToolResult | Awaitable[ToolResult], bool]] = []
    deferred = None
    for position in range(first, len(calls)):
        call = calls[position]
        spawned = p.spawner.handles(call)
        if spawned:
            # Every spawn of a step starts at once (slots permitting); reports fold back in order.
            p.bus.emit(
                ev.ToolCallStarted(
                    **_who(p),
                    step=n,
                    call_id=call.id,
                    name=call.name,
                    arguments=dict(call.arguments),
                )
            )
            done.append((call, p.spawner.spawn(p, s, n, position, call), True))
            continue
        result = await dispatch_call(p, s, n, position, call, preset if position == first else None)
        if result.deferred is not None:
            deferred = result.deferred
            break
        done.append((call, result, False))
    results: list[Message] = []
    rows: list[CallRecord] = []
    changed = False
    for call, pending, spawned in done:
        result = pending if isinstance(pending, ToolResult) else await p.cancel.guard(pending)
        if spawned:
            p.bus.emit(
                ev.ToolCallFinished(
                    **_who(p),
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
        results.append(Message("tool", result.output, tool_call_id=call.id, images=result.images))
        rows.append(tool_row(call, result))
    return results, rows, deferred, changed


async def finish(p: Deps, s: RunState, stop: Stop) -> RunResult:
    """Record the outcome, announce it, and build the result.

    An agent whose work ended while a sub-agent below it waits on a decision pauses instead: the
    tree is not done (resumed, it re-checks its last step and ends as it would have).
    """
    await p.spawner.drain(p.run_id)
    if stop.outcome in ("finished", "success") and p.spawner is not FLAT:
        stop = await held_below(p.store, p.run_id) or stop
    status = "paused" if stop.outcome == "awaiting_approval" else "completed"
    # A provider's or a gate's words end up here: stored (and returned) with no key in them.
    detail = p.bus.redactor.text(stop.detail)
    await p.store.finish_run(p.run_id, status=status, outcome=stop.outcome, detail=detail)
    if status == "completed":
        # An ask left open (a modal when the run was stopped) can never be answered now.
        await p.store.expire_approvals(p.run_id, f"expired: run {stop.outcome}")
    steps = await p.store.last_step(p.run_id)
    # Before `run_finished`, the last event of a run: the notification hooks' rows come first.
    await notified_end(p, s, steps, stop.outcome, detail)
    p.bus.emit(
        ev.RunFinished(**_who(p), outcome=stop.outcome, steps=steps, tokens=s.tokens, detail=detail)
    )
    return RunResult(
        stop.outcome,
        p.run_id,
        steps,
        s.tokens,
        detail,
        tuple(r.describe() for r in s.rules.remembered),
        stop.request_id,
    )


def _who(p: Deps) -> WhoFields:
    return p.who.fields()

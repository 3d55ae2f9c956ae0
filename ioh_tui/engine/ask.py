"""Asking the model: the step's request fitted to the window, the call, and its accounting.

Each request is the pinned part (the system prompt, the task block, the agent's notes) and the
history fitted to the model's window (`ioh_tui.context`). When the oldest turns must be folded,
the model itself summarises them in a call of its own (no tools, never streamed, one accounting
row, its tokens charged with the step); the summary is stored, and a `context_compacted` event says
how much room it made. A drive that finds the summary of the same turns in the store (a resume)
takes it without asking again. When no summary can be had (the call fails, or says nothing), the
turns are left out with a line saying so: the run goes on. A prompt that alone would pass what is
left of the token budget or the tree's ceiling is not sent. A `context_overflow` answer is
recovered once, by refitting the rest of the drive to less.
"""

from __future__ import annotations

from typing import Any

from ioh_tui.context import Context, Fitted, summary_request, window_for
from ioh_tui.core import events as ev
from ioh_tui.core.control import BudgetExhausted, Stop
from ioh_tui.core.errors import ProviderError
from ioh_tui.core.transcript import (
    Attempt,
    AttemptSink,
    Completion,
    Message,
    Request,
    StreamPiece,
    TextPiece,
    ThinkingPiece,
    Usage,
)
from ioh_tui.engine.budgets import apply_raises, deadline, hold_for_offers
from ioh_tui.engine.ids import WhoFields
from ioh_tui.engine.prompts import notes_block, system_prompt, task_block
from ioh_tui.engine.stall import Progress
from ioh_tui.engine.state import Deps, RunState
from ioh_tui.providers.fallback import FALLBACK_TO
from ioh_tui.tools.note import NOTE

_FOLDS_PER_STEP = 3
"""Folds one request may need (one normally; a summary longer than its room needs another)."""


async def prepare(p: Deps, s: RunState) -> None:
    """Set up a drive's context, stall counter and notes (a resumed drive: from the store)."""
    s.context = Context(window_for(p.provider.model, s.contract.context_window))
    s.progress = Progress(s.contract.stall_after)
    s.notes = notes_in(s.history)
    summaries = await p.store.summaries(p.run_id)
    if summaries:
        latest = summaries[-1]
        s.context.restore(s.history, latest.text, latest.turns)


def notes_in(history: list[Message]) -> list[str]:
    """The notes a transcript holds: each `note` call the tool accepted, in order."""
    accepted = {
        m.tool_call_id for m in history if m.role == "tool" and m.content.startswith("[noted]")
    }
    return [
        str(c.arguments["text"]).strip()
        for m in history
        for c in m.tool_calls
        if c.name == NOTE and c.id in accepted
    ]


async def query(p: Deps, s: RunState, n: int) -> tuple[Completion, list[dict[str, Any]]]:
    """Ask the model once for step `n` (with the provider's retries), streaming pieces as events.

    Returns the turn and its accounting rows, for the caller to store with the staged turn in
    one transaction (`Store.stage_turn`). A failed call's rows are stored here.
    """
    try:
        return await _ask(p, s, n, await _request(p, s, n))
    except ProviderError as exc:
        if exc.kind != "context_overflow":
            raise Stop("failed", n - 1, f"provider error: {exc}") from None
        s.context.shrink()
    try:
        return await _ask(p, s, n, await _request(p, s, n))
    except ProviderError as exc:
        raise Stop("failed", n - 1, f"provider error: {exc}") from None


async def _request(p: Deps, s: RunState, n: int) -> Request:
    """This step's request: the pinned part whole, the history fitted to the window."""
    pinned = [
        Message("system", system_prompt(s.contract)),
        Message("user", task_block(s.contract, project=p.project)),
    ]
    if p.instructions is not None:
        pinned.append(Message("user", p.instructions.block()))
    if p.skills:
        pinned.append(Message("user", p.skills.block()))
    if s.notes:
        pinned.append(Message("user", notes_block(s.notes)))
    fitted = s.context.fit(pinned, s.history, p.tools.specs)
    for _ in range(_FOLDS_PER_STEP):
        if fitted.fits or not fitted.fold:
            break
        await _fold(p, s, n, fitted, pinned)
        fitted = s.context.fit(pinned, s.history, p.tools.specs)
    if not fitted.fits:
        raise Stop(
            "failed",
            n - 1,
            f"the context cannot fit the model's window: the task, the notes and the latest turn "
            f"need about {fitted.tokens:,} tokens, and {s.context.limit:,} of the "
            f"{s.context.window:,}-token window are for the prompt",
        )
    await _afford(p, s, n, fitted.tokens)
    return Request((*pinned, *fitted.messages), tools=p.tools.specs)


async def _fold(p: Deps, s: RunState, n: int, fitted: Fitted, pinned: list[Message]) -> None:
    """Fold the oldest turns `fitted` names: into the model's summary, or left out."""
    turns = s.context.folded + fitted.fold
    stored = await p.store.summary(p.run_id, turns)
    if stored is not None:
        text: str | None = stored.text
    else:
        folded = s.context.to_fold(fitted.fold)
        asked = summary_request(s.contract.goal, s.context.summary, folded, limit=s.context.limit)
        text = await _summarise(p, s, n, asked)
    s.context.fold(fitted.fold, text)
    if text is None or stored is not None:
        return
    after = s.context.fit(pinned, s.history, p.tools.specs).tokens
    await p.store.add_summary(p.run_id, n, turns, text, fitted.tokens, after)
    p.bus.emit(
        ev.ContextCompacted(**_who(p), step=n, tokens_before=fitted.tokens, tokens_after=after)
    )


async def _summarise(p: Deps, s: RunState, n: int, request: Request) -> str | None:
    """The model's summary (None when the call fails or the answer is empty); accounted."""
    attempts: list[Attempt] = []
    try:
        completion = await p.cancel.guard(
            p.provider.complete(
                request,
                on_attempt=_attempt_sink(p, n, attempts),
                deadline=await deadline(p.store, p.run_id, s.contract),
                max_retries=s.contract.max_retries,
            )
        )
    except ProviderError:
        await account(p, n, attempts)
        return None
    await account(p, n, attempts)
    if completion.usage is not None:
        s.unbilled.append(completion.usage)
    return p.bus.redactor.text(completion.text).strip() or None


async def _afford(p: Deps, s: RunState, n: int, prompt: int) -> None:
    """Refuse to send a prompt that alone would pass what is left of a token budget.

    A nearly spent budget a supervisor is offering to raise is held for first (its answer may
    be a raise that lets the prompt through).
    """
    if await p.cancel.guard(hold_for_offers(p.raises, n, s.contract, s.tokens)):
        s.contract = await apply_raises(
            p.raises, s.contract, store=p.store, run_id=p.run_id, bus=p.bus, who=p.who
        )
    budget = s.contract.token_budget
    if budget is not None and s.tokens + prompt > budget:
        raise Stop(
            "cost_budget_exceeded",
            n - 1,
            f"the next request needs about {prompt:,} tokens and {max(0, budget - s.tokens):,} "
            f"of the {budget:,}-token budget are left",
        )
    if (halted := await p.spawner.afford(prompt)) is not None:
        raise Stop("cost_budget_exceeded", n - 1, halted)


async def _ask(
    p: Deps, s: RunState, n: int, request: Request
) -> tuple[Completion, list[dict[str, Any]]]:
    """One call (with the provider's retries), streaming pieces as events.

    A provider's failure that survives its retries is raised as it is, its attempts accounted;
    a turn is returned with its accounting rows, not yet stored.
    """
    # A key the model repeats may arrive split across pieces: each stream holds back an end
    # that could begin one until the next piece (or the attempt's end) settles it.
    redactor = p.bus.redactor
    text = redactor.stream(lambda t: p.bus.emit(ev.TextDelta(**_who(p), step=n, text=t)))
    thinking = redactor.stream(lambda t: p.bus.emit(ev.ThinkingDelta(**_who(p), step=n, text=t)))

    def on_piece(piece: StreamPiece) -> None:
        if isinstance(piece, TextPiece) and piece.text:
            text.feed(piece.text)
        elif isinstance(piece, ThinkingPiece) and piece.text:
            thinking.feed(piece.text)

    pending: list[Attempt] = []
    sink = _attempt_sink(p, n, pending)

    def on_attempt(attempt: Attempt) -> None:
        # The attempt ended: what its streams held back is its text, shown before any retry.
        text.flush()
        thinking.flush()
        sink(attempt)

    try:
        completion = await p.cancel.guard(
            p.provider.complete(
                request,
                on_piece=on_piece,
                on_attempt=on_attempt,
                deadline=await deadline(p.store, p.run_id, s.contract),
                max_retries=s.contract.max_retries,
            )
        )
    except BudgetExhausted as exc:
        await account(p, n, pending)
        raise Stop("time_budget_exceeded", n - 1, str(exc)) from None
    except ProviderError:
        await account(p, n, pending)
        raise
    finally:
        text.flush()
        thinking.flush()
    calls = accounting_rows(pending)
    # What the model said is staged, stored and shown: never with a key in it.
    completion = redactor.value(completion)
    usage = completion.usage
    if usage is not None:
        s.context.gauge.observe(request.messages, request.tools, usage.input_tokens)
    p.bus.emit(
        ev.UsageReported(
            **_who(p),
            step=n,
            input_tokens=usage.input_tokens if usage else 0,
            output_tokens=usage.output_tokens if usage else 0,
            ttft_ms=completion.ttft_ms,
            latency_ms=completion.latency_ms,
            cost_usd=usage.cost_usd if usage else None,
            cache_read_tokens=usage.cache_read_tokens if usage else 0,
        )
    )
    return completion, calls


def _attempt_sink(p: Deps, n: int, pending: list[Attempt]) -> AttemptSink:
    """Keeps each attempt for accounting, announcing a retry and a fall-over as they happen.

    A switch of provider is announced once: by the fallback chain's mark on the attempt that
    ended the failed provider's turn (before the next one streams), else when an attempt comes
    from another provider than the failed one before it.
    """
    last: list[Attempt] = []
    announced: list[str] = []

    def fell_back(from_provider: str, to_provider: str) -> None:
        announced[:] = [to_provider]
        p.bus.emit(
            ev.FellBack(**_who(p), step=n, from_provider=from_provider, to_provider=to_provider)
        )

    def on_attempt(attempt: Attempt) -> None:
        pending.append(attempt)
        if attempt.retry_in_s is not None:
            # Announced at once: it voids the text this failed attempt streamed (the app clears
            # it); the delay is the very wait then slept, jitter included.
            p.bus.emit(
                ev.RetryScheduled(
                    **_who(p),
                    step=n,
                    attempt=attempt.attempt,
                    error_kind=attempt.failure or "",
                    delay_ms=round(attempt.retry_in_s * 1000),
                )
            )
        to = attempt.extra.get(FALLBACK_TO)
        before = last[0] if last else None
        if isinstance(to, str):
            fell_back(attempt.provider, to)
        elif (
            before is not None
            and before.failure is not None
            and before.provider != attempt.provider
            and announced != [attempt.provider]
        ):
            fell_back(before.provider, attempt.provider)
        last[:] = [attempt]

    return on_attempt


async def account(p: Deps, n: int, attempts: list[Attempt]) -> None:
    """One accounting row per attempt, stored now (a failed call's, a summary's)."""
    for row in accounting_rows(attempts):
        await p.store.add_provider_call(p.run_id, n, row)


def accounting_rows(attempts: list[Attempt]) -> list[dict[str, Any]]:
    """One `provider_calls` row per attempt (the columns besides the run and the step)."""
    rows = []
    for a in attempts:
        u = a.usage
        rows.append(
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
            }
        )
    attempts.clear()
    return rows


def billed(s: RunState, usage: Usage | None) -> Usage | None:
    """The step's usage with the step's other calls (compactions) added; they are then billed."""
    extra, s.unbilled = s.unbilled, []
    if not extra:
        return usage
    total = usage or Usage()
    for u in extra:
        total = Usage(
            input_tokens=total.input_tokens + u.input_tokens,
            output_tokens=total.output_tokens + u.output_tokens,
            cache_read_tokens=total.cache_read_tokens + u.cache_read_tokens,
            cache_write_tokens=total.cache_write_tokens + u.cache_write_tokens,
            reasoning_tokens=total.reasoning_tokens + u.reasoning_tokens,
            cost_usd=None
            if total.cost_usd is None or u.cost_usd is None
            else total.cost_usd + u.cost_usd,
        )
    return total


def _who(p: Deps) -> WhoFields:
    return p.who.fields()

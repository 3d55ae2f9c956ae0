"""Headless runs: `exec` and `resume --headless`. Stdout carries only the result or JSON events."""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

from ioh_tui.cli.decide import check_decide, decision_of, needs_request, why_asked
from ioh_tui.cli.extensions import run_extensions
from ioh_tui.cli.fleet import connect_fleet, need_a_tree
from ioh_tui.cli.new_run import configured_run
from ioh_tui.cli.options import (
    budget_overrides,
    build_policy,
    build_provider,
    build_sandbox,
    effective_config,
    left_out_lines,
    store_path,
    with_stored_driver,
)
from ioh_tui.cli.terminal import say, say_json
from ioh_tui.core import events as ev
from ioh_tui.core.errors import ConfigError, ConflictError, ResumeError
from ioh_tui.demo.home import settle
from ioh_tui.engine import (
    CancelToken,
    Parts,
    Resume,
    RunResult,
    TaskContract,
    start,
)
from ioh_tui.engine.bus import Observer
from ioh_tui.engine.contract import TERMINAL
from ioh_tui.engine.decide import request_from_row, save_remembered
from ioh_tui.engine.tree import Fleet
from ioh_tui.policy import ApprovalRequest, ApproveAll, Approver, Decision, DeferAll, DenyAll
from ioh_tui.policy.approver import WaitApprover
from ioh_tui.sandbox.floor import key_exposure
from ioh_tui.store import ApprovalRow, Store


def approver_for(choice: str, timeout_s: float | None = None) -> Approver:
    """The headless approver for `--on-approval` (and `--approval-timeout` with `wait`)."""
    if choice == "wait":
        return WaitApprover(timeout_s, announce_waiting(timeout_s))
    if timeout_s is not None:
        raise ConfigError("--approval-timeout needs --on-approval wait")
    if choice == "approve":
        return ApproveAll()
    if choice == "defer":
        return DeferAll()
    return DenyAll("denied: nobody is there to approve it (headless run)")


def announce_waiting(timeout_s: float | None) -> Callable[[ApprovalRequest], None]:
    """Say on stderr how to answer a waiting ask (and ring the bell when a person is there).

    The ask itself is already announced: the `approval_requested` event (on stdout with
    `--json`) and the `notification` hooks (`approval_waiting`) when hooks are configured.
    """

    def announce(request: ApprovalRequest) -> None:
        until = f" (deferred after {timeout_s:g} s)" if timeout_s is not None else ""
        bell = "\a" if sys.stderr.isatty() else ""
        say(
            f"{bell}waiting on you{until}: run {request.run_id} asks to {request.act.value} "
            f"{request.target}; answer with `ioh-tui resume {request.run_id} --decide "
            "approve|deny` or in the app's queue (w)",
            err=True,
        )

    return announce


def json_observer(out: Callable[[str], None]) -> Observer:
    """One JSON object per line."""

    def observe(event: ev.Event) -> None:
        out(json.dumps(ev.to_json(event)))

    return observe


def progress_observer() -> Observer:
    """A terse human trace on stderr."""

    def observe(event: ev.Event) -> None:
        line = _progress_line(event)
        if line:
            if event.agent_id is not None and event.agent_id != event.run_id:
                line = f"[agent-{event.agent_id}] {line.lstrip()}"
            say(line, err=True)

    return observe


def _progress_line(event: ev.Event) -> str | None:
    match event:
        case ev.AgentSpawned():
            return f"spawned: {event.goal}"
        case ev.AgentFinished():
            return f"finished: {event.outcome}"
        case ev.RunStarted() if event.agent_id is not None and event.agent_id != event.run_id:
            return None
        case ev.RunStarted():
            model = f"{event.provider} {event.model or ''}".strip()
            line = f"run {event.run_id}: {event.goal} [{model}, sandbox {event.sandbox}]"
            if event.instructions:
                line += f"\nproject instructions: {event.instructions} (pinned in every request)"
            if event.skills:
                line += f"\nskills: {', '.join(event.skills)} (named in every request)"
            for warning in event.warnings:
                line += f"\nWARNING: {warning}"
            if event.sandbox == "none":
                line += "\nWARNING: --sandbox none: commands run with no containment at all"
            if (exposure := key_exposure(event.sandbox)) is not None:
                line += f"\nWARNING: {exposure}"
            if event.sandbox in ("portable-floor", "none"):
                line += (
                    f"\nWARNING: sandbox {event.sandbox}: commands can read and write the store "
                    "(every run's transcript) and its key; only bwrap and namespaces hide them"
                )
            return line
        case ev.StepStarted():
            return f"step {event.step}"
        case _:
            return _within_step(event)


def _within_step(event: ev.Event) -> str | None:
    match event:
        case ev.ToolCallFinished():
            mark = "refused" if event.refused else ("ok" if event.ok else "failed")
            return f"  {event.name}: {event.summary} ({mark})"
        case ev.ApprovalRequested():
            return _asked(event)
        case ev.ApprovalResolved():
            return f"  approval {event.request_id}: {event.decision}"
        case ev.RetryScheduled():
            return f"  retry after {event.error_kind} in {event.delay_ms} ms"
        case ev.FellBack():
            return f"  fallback: {event.from_provider} failed, {event.to_provider} takes over"
        case ev.StallWarned():
            return f"  stall warning: {event.detail}"
        case ev.ContextCompacted():
            return f"  context compacted: {event.tokens_before:,} -> {event.tokens_after:,} tokens"
        case ev.NoteAdded():
            return f"  note: {event.text}"
        case ev.HookRan():
            said = f": {event.reason}" if event.reason else ""
            return f"  hook {event.label}: {event.outcome}{said}"
        case ev.SkillLoaded():
            return f"  skill {event.name} loaded" + (f" (file {event.file})" if event.file else "")
        case ev.VerificationFinished():
            return f"  gate {event.status}: {event.detail.splitlines()[0] if event.detail else ''}"
        case _:
            return None


def _asked(event: ev.ApprovalRequested) -> str:
    """A decision asked for, with the rule that asked (why it was not left to --on-approval)."""
    why = why_asked(event.rule, event.layer)
    return f"  approval {event.request_id}: {event.act} {event.target}{why}"


def _observers(as_json: bool) -> list[Observer]:
    return [json_observer(say_json)] if as_json else [progress_observer()]


def _report(result: RunResult, as_json: bool) -> int:
    if not as_json:
        detail = f": {result.detail}" if result.detail else ""
        say(
            f"run {result.run_id} {result.outcome} after {result.steps} steps, "
            f"{result.tokens:,} tokens{detail}"
        )
        if result.outcome == "awaiting_approval":
            say(f"decide with: ioh-tui resume {result.run_id} --decide approve|deny", err=True)
    return result.exit_status


async def _with_signals(
    cancel: CancelToken, work: Awaitable[RunResult], approver: Approver
) -> RunResult:
    """Await the run with SIGINT and SIGTERM stopping it cleanly (outcome `cancelled`).

    While a `wait` approver holds asks, a signal defers them instead: the run pauses
    (`awaiting_approval`, exit 4) with each request pending, to be answered later.
    """
    loop = asyncio.get_running_loop()

    def stop(name: str) -> None:
        if isinstance(approver, WaitApprover) and approver.waiting and not approver.stopped:
            approver.stop()
        else:
            cancel.cancel(f"stopped by {name}")

    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop, signal.Signals(sig).name)
    try:
        return await work
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)


def exec_command(args: argparse.Namespace) -> int:
    """`ioh-tui exec GOAL ...`."""
    approver = approver_for(args.on_approval, args.approval_timeout)
    run = configured_run(args, lambda line: say(f"ioh-tui: {line}", err=True))
    need_a_tree(args, run.request.containment)
    fleet = connect_fleet(args)

    async def go(store: Store, cancel: CancelToken) -> RunResult:
        parts = Parts(
            run.provider,
            store,
            policy=run.policy,
            approver=approver,
            sandbox=run.sandbox,
            observers=tuple(_observers(args.json)),
            cancel=cancel,
            mcp=run.servers,
            hooks=run.hooks,
            fleet=fleet,
        )
        return await start(run.request, parts)

    return _run_headless(go, args, approver, fleet)


def resume_command(args: argparse.Namespace) -> int:
    """`ioh-tui resume RUN_ID --headless ...`."""
    approver = approver_for(args.on_approval, args.approval_timeout)
    check_decide(args)
    overrides = budget_overrides(args)
    for line in left_out_lines(effective_config(args)):
        say(f"ioh-tui: {line}", err=True)
    policy = build_policy(args, None, files=False) if args.policy else None
    sandbox = build_sandbox(args)
    workspace = Path(args.workspace).resolve() if args.workspace else None
    fleet = connect_fleet(args)

    async def go(store: Store, cancel: CancelToken) -> RunResult:
        row = await store.run(args.run_id)
        ended = row.status == "completed" and row.outcome in TERMINAL
        asked = await pending_request(store, args.run_id) if needs_request(args) else None
        decision = decision_of(args, asked)
        try:
            stored = TaskContract.from_dict(row.contract)
        except ConfigError as exc:
            raise ConfigError(f"store {store.path}: run {args.run_id}: {exc}") from None
        if args.workspace and stored.root != workspace:
            raise ConfigError(f"run {args.run_id} works in {stored.root}, not {args.workspace}")
        provider = build_provider(
            with_stored_driver(args, row.contract),
            overrides.get("max_retries", stored.max_retries),
        )
        hooks, servers = run_extensions(args, stored.root)
        parts = Parts(
            provider,
            store,
            policy=policy,
            approver=approver,
            sandbox=sandbox,
            observers=tuple(_observers(args.json)),
            cancel=cancel,
            mcp=servers,
            hooks=hooks,
            fleet=fleet,
        )
        try:
            result = await start(Resume(args.run_id, decision, overrides), parts)
        except ConflictError:
            if decision is None:
                raise
            return await answer_live_run(store, args.run_id, decision, Path(row.root))
        if ended:
            say(
                f"ioh-tui: run {row.id} has ended ({row.outcome}): nothing is left to resume",
                err=True,
            )
        # A demo run's directory stays while a decision waits on it; otherwise it goes.
        await asyncio.to_thread(settle, stored.root, result.outcome)
        return result

    return _run_headless(go, args, approver, fleet)


async def pending_request(store: Store, run_id: int) -> ApprovalRow | None:
    """The request run `run_id` waits on: its own latest pending one, else a sub-agent's."""
    pending = await store.approvals(run_id, pending_only=True)
    if pending:
        return pending[-1]
    below = await store.pending_below(run_id)
    return await store.approval(below[0]) if below else None


async def answer_live_run(
    store: Store, run_id: int, decision: Decision, workspace: Path
) -> RunResult:
    """Another process drives the run and waits on a decision: answer it in the store.

    The waiting gate polls the request and takes the answer (re-checking a rewrite against the
    run's policy, keeping a remembered rule for the run); exactly one answer lands. A rule
    remembered for the project or the user is saved here (the sealed answer has no scope).
    """
    pending = await store.approvals(run_id, pending_only=True)
    if not pending:
        raise ResumeError(
            f"run {run_id} is being driven by another process and has no pending decision"
        )
    request = pending[-1]
    answer = decision.to_row(request_from_row(request))
    if not await store.answer_approval(request.id, answer, by="attached"):
        raise ResumeError(f"request {request.id} was answered by someone else first")
    if not_saved := await asyncio.to_thread(save_remembered, decision, workspace):
        say(f"ioh-tui: {not_saved}", err=True)
    named = "rewrite" if decision.modified else "remember" if decision.remember else answer.status
    say(
        f"answered request {request.id} of run {run_id} ({named}); the live run continues",
        err=True,
    )
    row = await store.run(run_id)
    return RunResult("finished", run_id, row.steps, row.tokens, "answered a live run's decision")


def _run_headless(
    start: Callable[[Store, CancelToken], Awaitable[RunResult]],
    args: argparse.Namespace,
    approver: Approver,
    fleet: Fleet | None = None,
) -> int:
    async def main() -> RunResult:
        cancel = CancelToken()
        # A resume continues a recorded run: a missing or empty store is an error, not a new one.
        try:
            async with Store.open(store_path(args), create=args.command == "exec") as store:
                return await _with_signals(cancel, start(store, cancel), approver)
        finally:
            if fleet is not None:
                await fleet.close()

    result = asyncio.run(main())
    return _report(result, args.json)

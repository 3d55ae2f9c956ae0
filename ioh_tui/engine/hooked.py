"""The hooks at their fixed points of a run, and what their answers do (docs/extending.md).

`pre_tool` runs before a call is decided: a deny refuses it (nothing beats it, no person either),
an `ask` or `allow` is handed to the call's decision gate (`decide.HookWord`: neither moves a
policy deny), rewritten arguments replace the call's (so the tool's own policy check sees them).
`post_tool` may add text to the observation; `stop` may keep a run that would end going, with a
reason the model reads, `STOP_BLOCK_LIMIT` times per run; `notification` is told that a decision
waits or that the run ended, and decides nothing. A hook that fails, times out or answers garbage
decides nothing and is reported. Each run is an event (`hook_ran`), a trace row (`sandbox_events`,
kind `hook`) and, where it decided, a policy event whose source names the hook.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from ioh_tui.core import events as ev
from ioh_tui.core.acts import Act, Effect
from ioh_tui.core.transcript import Message, ToolCall
from ioh_tui.engine.decide import HookWord
from ioh_tui.engine.guard import policy_guard
from ioh_tui.engine.state import Deps, RunState
from ioh_tui.hooks import (
    STOP_BLOCK_LIMIT,
    BadAnswer,
    Hook,
    HookRun,
    read_post,
    read_pre,
    read_stop,
    run_hook,
)
from ioh_tui.sandbox import guarded
from ioh_tui.tools import ToolResult

STOP_MARK = "[stop hook]"
"""Starts the message a blocking `stop` hook gives the model (counted to keep the limit)."""
_TOOL_ACTS = {
    "exec": Act.EXEC,
    "write_file": Act.WRITE,
    "edit_file": Act.WRITE,
    "read_file": Act.READ,
    "grep": Act.READ,
    "find": Act.READ,
    "list_dir": Act.READ,
}
"""The act a refused call would have been, for its policy event (a tool with none has no row)."""
_A = TypeVar("_A")


@dataclass(frozen=True, slots=True)
class PreTool:
    """What the call's `pre_tool` hooks decided together."""

    call: ToolCall
    """The call to run (its arguments as the last rewrite left them)."""
    refusal: ToolResult | None = None
    """A hook denied the call: its observation."""
    word: HookWord | None = None
    """An `ask` (which wins over an `allow`) or an `allow` for the call's decision gate."""
    rewrote: str = ""
    """Said to the model when a hook rewrote the arguments."""


async def pre_tool(p: Deps, s: RunState, n: int, call: ToolCall) -> PreTool:
    """Run the call's `pre_tool` hooks in order (each sees the arguments the last one left)."""
    word: HookWord | None = None
    rewriters: list[str] = []
    for hook in p.hooks.at("pre_tool", call.name):
        run, answer = _read(
            await _run(p, s, n, hook, _call_payload(p, s, n, "pre_tool", call)), read_pre
        )
        if answer is None:
            await _report(p, n, run, "failed", run.failure, call)
            continue
        if answer.decision == "deny":
            # The model, the store and every observer read the reason: no key rides it.
            reason = p.bus.redactor.text(answer.reason or "a hook denied this call")
            await _report(p, n, run, "deny", reason, call)
            await _refused_by_hook(p, n, call, hook, reason)
            observation = f"[{call.name} denied by hook {hook.label}] {reason}"
            return PreTool(call, ToolResult(observation, ok=False, refused=True))
        if answer.arguments is not None and answer.arguments != dict(call.arguments):
            call = replace(call, arguments=answer.arguments)
            rewriters.append(hook.label)
        outcome = answer.decision or ("rewrite" if answer.arguments is not None else "none")
        await _report(p, n, run, outcome, answer.reason or None, call)
        if answer.decision == "ask" or (answer.decision == "allow" and word is None):
            word = HookWord(Effect(answer.decision), hook.label, answer.reason)
    rewrote = ""
    if rewriters:
        rewrote = (
            f"[the arguments were rewritten by hook {', '.join(rewriters)}: "
            f"{json.dumps(dict(call.arguments), ensure_ascii=False)[:500]}]"
        )
    return PreTool(call, None, word, rewrote)


async def post_tool(p: Deps, s: RunState, n: int, call: ToolCall, result: ToolResult) -> ToolResult:
    """Run the call's `post_tool` hooks; what they add is appended to the observation."""
    added: list[str] = []
    for hook in p.hooks.at("post_tool", call.name):
        payload = {
            **_call_payload(p, s, n, "post_tool", call),
            "ok": result.ok,
            "refused": result.refused,
            "observation": result.output,
        }
        run, answer = _read(await _run(p, s, n, hook, payload), read_post)
        if answer is None:
            await _report(p, n, run, "failed", run.failure, call)
        elif answer.add:
            add = p.bus.redactor.text(answer.add)
            await _report(p, n, run, "add", add, call)
            added.append(f"[hook {hook.label}] {add}")
        else:
            await _report(p, n, run, "none", None, call)
    if not added:
        return result
    return replace(result, output="\n".join([result.output, *added]))


async def kept_going(
    p: Deps, s: RunState, n: int, outcome: str, gate: Mapping[str, Any] | None
) -> bool:
    """Whether a `stop` hook keeps the run from ending `outcome` (its reason joins the history).

    At most `STOP_BLOCK_LIMIT` blocks per run, counted in the transcript so a resume keeps them.
    """
    hooks = p.hooks.at("stop")
    if not hooks:
        return False
    blocked = sum(1 for m in s.history if m.role == "user" and m.content.startswith(STOP_MARK))
    final = next((m.content for m in reversed(s.history) if m.role == "assistant"), "")
    for hook in hooks:
        payload = {
            **_payload(p, s, n, "stop"),
            "outcome": outcome,
            "final_answer": final,
            "gate": dict(gate) if gate is not None else None,
            "blocks_left": max(0, STOP_BLOCK_LIMIT - blocked),
        }
        run, answer = _read(await _run(p, s, n, hook, payload), read_stop)
        if answer is None:
            await _report(p, n, run, "failed", run.failure)
        elif not answer.block:
            await _report(p, n, run, "none", answer.reason or None)
        elif blocked >= STOP_BLOCK_LIMIT:
            said = f"{answer.reason} (not kept going: {STOP_BLOCK_LIMIT} blocks per run)"
            await _report(p, n, run, "ignored", said)
        else:
            reason = p.bus.redactor.text(answer.reason)
            await _report(p, n, run, "block", reason)
            message = Message(
                "user",
                f"{STOP_MARK} The run was about to end ({outcome}), but hook {hook.label} "
                f"asks you to go on: {reason}",
            )
            await p.store.append_to_step(p.run_id, n, [message], [])
            s.history.append(message)
            return True
    return False


def notify(p: Deps, s: RunState, n: int, kind: str, fields: Mapping[str, Any]) -> None:
    """Start the `notification` hooks matching `kind`; the run never waits for them here."""
    for hook in p.hooks.at("notification", kind):
        payload = {**_payload(p, s, n, "notification"), "kind": kind, **fields}
        task = asyncio.get_running_loop().create_task(_notified(p, s, n, hook, payload))
        s.notifying.add(task)
        task.add_done_callback(s.notifying.discard)


def notifier(p: Deps, s: RunState, emit: Callable[[ev.Event], None]) -> Callable[[ev.Event], None]:
    """`emit`, and a `approval_waiting` notification when it carries a waiting decision."""
    if not p.hooks.at("notification", "approval_waiting"):
        return emit

    def emitted(event: ev.Event) -> None:
        emit(event)
        if isinstance(event, ev.ApprovalRequested):
            notify(
                p,
                s,
                event.step,
                "approval_waiting",
                {
                    "message": f"a decision is waiting: {event.act} {event.target}",
                    "request_id": event.request_id,
                    "act": event.act,
                    "target": event.target,
                },
            )

    return emitted


async def notified_end(p: Deps, s: RunState, n: int, outcome: str, detail: str) -> None:
    """Tell `notification` hooks the run ended, and wait for every notification under way."""
    notify(
        p,
        s,
        n,
        "run_finished",
        {"message": f"the run ended: {outcome}", "outcome": outcome, "detail": detail},
    )
    if s.notifying:
        await asyncio.gather(*s.notifying, return_exceptions=True)


async def _notified(p: Deps, s: RunState, n: int, hook: Hook, payload: dict[str, Any]) -> None:
    # Not guarded by the cancel token: a stopped run's end is still told (within the timeout).
    run = await _run(p, s, n, hook, payload, guard=False)
    await _report(p, n, run, "failed" if run.failure else "notified", run.failure)


async def _run(
    p: Deps, s: RunState, n: int, hook: Hook, payload: Mapping[str, Any], *, guard: bool = True
) -> HookRun:
    # The policy reaches inside the hook's sandbox as inside a command's: denied files masked.
    sandbox = guarded(p.sandbox, lambda _cwd: policy_guard(s.rules.effective(), p.workspace.root))
    ran = run_hook(hook, payload, sandbox, p.workspace.root)
    # Stopping the run stops a hook that holds it up (its process tree goes with it).
    return await (p.cancel.guard(ran) if guard else ran)


def _read(run: HookRun, read: Callable[[str], _A]) -> tuple[HookRun, _A | None]:
    """The hook's answer read by `read`; None (and why, in the run) when it gives none."""
    if run.failure is not None:
        return run, None
    try:
        return run, read(run.stdout)
    except BadAnswer as exc:
        return replace(run, failure=f"answered garbage: {exc}"), None


def _payload(p: Deps, s: RunState, n: int, event: str) -> dict[str, Any]:
    return {
        "event": event,
        "run_id": p.who.run_id,
        "agent_id": p.run_id,
        "step": n,
        "goal": s.contract.goal,
        "workspace": str(p.workspace.root),
    }


def _call_payload(p: Deps, s: RunState, n: int, event: str, call: ToolCall) -> dict[str, Any]:
    return {
        **_payload(p, s, n, event),
        "tool": call.name,
        "call_id": call.id,
        "arguments": dict(call.arguments),
    }


async def _report(
    p: Deps,
    n: int,
    run: HookRun,
    outcome: str,
    reason: str | None,
    call: ToolCall | None = None,
) -> None:
    """The hook's run as an event and a trace row."""
    hook = run.hook
    p.bus.emit(
        ev.HookRan(
            **p.who.fields(),
            step=n,
            hook=hook.event,
            label=hook.label,
            outcome=outcome,
            tool=call.name if call else None,
            call_id=call.id if call else None,
            reason=reason,
            duration_ms=run.duration_ms,
        )
    )
    said = f" — {reason}" if reason else ""
    on = f" {call.name}" if call else ""
    await p.store.add_sandbox_event(
        p.run_id, n, "hook", p.sandbox.backend, f"{hook.label}{on}: {outcome}{said}"
    )


async def _refused_by_hook(p: Deps, n: int, call: ToolCall, hook: Hook, reason: str) -> None:
    """A hook's deny in the policy events, its source the hook (who decided, for the trace)."""
    act = _TOOL_ACTS.get(call.name)
    if act is None:
        return
    await p.store.add_policy_event(
        p.run_id,
        n,
        kind="refusal",
        act=act.value,
        target=json.dumps(dict(call.arguments), ensure_ascii=False)[:500],
        rule=reason[:200],
        layer="hooks",
        source=f"hook {hook.label}",
    )

"""Dispatching one tool call: announce, decide, run it, and journal effects that must not repeat."""

from __future__ import annotations

import dataclasses

from ioh_tui.core import events as ev
from ioh_tui.core.acts import Act, Effect
from ioh_tui.core.transcript import ToolCall
from ioh_tui.engine.budgets import deadline
from ioh_tui.engine.decide import DecisionGate, HookWord, Preset
from ioh_tui.engine.gatework import trace_command
from ioh_tui.engine.guard import policy_guard
from ioh_tui.engine.hooked import notifier, post_tool, pre_tool
from ioh_tui.engine.recovery import Interrupted, ask_operator, journal_form, replay
from ioh_tui.engine.state import Deps, RunState
from ioh_tui.policy import ApprovalRequest, Policy, Verdict
from ioh_tui.sandbox import guarded
from ioh_tui.store import CallRecord
from ioh_tui.tools import ToolContext, ToolResult
from ioh_tui.tools.base import NetVerdict
from ioh_tui.tools.vision import vision_of

_OUTPUT_EVENT_CHARS = 4000
"""Live output is forwarded to observers in pieces of at most this size."""


async def dispatch_call(
    p: Deps, s: RunState, n: int, position: int, call: ToolCall, preset: Preset | None
) -> ToolResult:
    """Run one call and announce it before and after; every failure is an observation.

    A fresh call (not replayed, not a resumed decision) goes through its `pre_tool` hooks first
    and its `post_tool` hooks after (`hooked.py`).
    """
    who = p.who.fields()
    p.bus.emit(
        ev.ToolCallStarted(
            **who, step=n, call_id=call.id, name=call.name, arguments=dict(call.arguments)
        )
    )
    tool = p.tools.get(call.name)
    cut_ask = tool.cut_ask if tool is not None else None
    replayed = (
        None
        if preset is not None
        else replay(s.journal, p.workspace.root, n, position, call, unknowable=cut_ask is not None)
    )
    if isinstance(replayed, Interrupted):
        assert cut_ask is not None
        asked = cut_ask(call.arguments)
        result = await ask_operator(p.store, p.bus, p.who, p.run_id, p.agent_label, n, call, asked)
    elif replayed is not None:
        result = replayed
    elif call.arguments_error is not None:
        result = ToolResult(
            f"[{call.name} error] the arguments were not a JSON object: "
            f"{call.arguments_error[:500]}",
            ok=False,
        )
    elif preset is not None or not p.hooks:
        result = await _run(p, s, n, position, call, preset)
    else:
        result = await _hooked(p, s, n, position, call)
    if (skill := result.meta.get("skill")) is not None and result.ok:
        p.bus.emit(
            ev.SkillLoaded(
                **who,
                step=n,
                name=str(skill),
                path=str(result.meta.get("path", "")),
                file=result.meta.get("file"),
            )
        )
    if result.deferred is None:
        p.bus.emit(
            ev.ToolCallFinished(
                **who,
                step=n,
                call_id=call.id,
                name=call.name,
                ok=result.ok,
                refused=result.refused,
                summary=result.summary,
                output=result.output,
            )
        )
    return result


async def _hooked(p: Deps, s: RunState, n: int, position: int, call: ToolCall) -> ToolResult:
    """The call between its `pre_tool` and `post_tool` hooks."""
    pre = await pre_tool(p, s, n, call)
    if pre.refusal is not None:
        return pre.refusal
    result = await _run(p, s, n, position, pre.call, None, pre.word)
    if result.deferred is not None:
        return result
    if pre.rewrote:
        result = dataclasses.replace(result, output=f"{pre.rewrote}\n{result.output}")
    return await post_tool(p, s, n, pre.call, result)


async def _run(
    p: Deps,
    s: RunState,
    n: int,
    position: int,
    call: ToolCall,
    preset: Preset | None,
    hook: HookWord | None = None,
) -> ToolResult:
    tool = p.tools.get(call.name)
    who = p.who.fields()

    def emit_output(text: str) -> None:
        for i in range(0, len(text), _OUTPUT_EVENT_CHARS):
            p.bus.emit(
                ev.ToolOutput(
                    **who, step=n, call_id=call.id, text=text[i : i + _OUTPUT_EVENT_CHARS]
                )
            )

    # Live output arrives in pieces that may split a key: the stream holds back a possible start.
    live = p.bus.redactor.stream(emit_output)

    decider = DecisionGate(
        rules=s.rules,
        workspace=p.workspace,
        approver=p.approver,
        store=p.store,
        emit=notifier(p, s, p.bus.emit),
        cancel=p.cancel,
        base=ApprovalRequest(
            act=Act.READ,
            target="",
            run_id=p.run_id,
            agent_id=p.who.agent_id,
            agent_label=p.agent_label,
            step=n,
            goal=s.contract.goal,
            tool=call.name,
        ),
        who=p.who,
        call_id=call.id,
        preset=preset,
        hook=hook,
    )
    ctx = ToolContext(
        workspace=p.workspace,
        decide=decider,
        visible=lambda rel: decider.verdict(Act.READ, rel).effect is not Effect.DENY,
        # A search shows a file's lines only where reading it needs no one's answer.
        readable=lambda rel: decider.verdict(Act.READ, rel).effect is Effect.ALLOW,
        net=lambda line: _net(decider.verdict(Act.NET, line)),
        # The policy reaches inside the sandbox too: denied files masked, host-run files read-only.
        sandbox=guarded(
            p.sandbox, lambda _cwd: policy_guard(s.rules.effective(), p.workspace.root)
        ),
        exec_timeout_s=s.contract.exec_timeout_s,
        deadline=await deadline(p.store, p.run_id, s.contract),
        hard_links=lambda act, rel: _names_or_cannot_refuse(s, act, rel),
        subject=s.contract.subject,
        on_output=live.feed,
        toolchain=p.toolchain,
        vision=vision_of(p.provider),
        model=p.provider.model,
    )
    attempt_id = None
    if tool is not None and tool.mutating:
        attempt_id = opened = await p.store.open_attempt(
            p.run_id, n, position, call.id, call.name, dict(call.arguments)
        )

        async def journal(intent: dict[str, object]) -> None:
            await p.store.note_intent(opened, intent)

        ctx.journal = journal
    try:
        result = await p.cancel.guard(p.tools.dispatch(call.name, call.arguments, ctx))
    finally:
        live.flush()
    # The model, the journal, the store and every observer read the output: a key a command
    # printed (the harness's environment on the floor, a file holding it) is masked first.
    masked = p.bus.redactor.text(result.output)
    if masked is not result.output:
        result = dataclasses.replace(result, output=masked)
    if (ran := result.ran) is not None:
        await trace_command(p.store, p.run_id, n, ran.backend, list(ran.argv), ran.cap_hit)
        if granted := result.meta.get("network"):
            await p.store.add_sandbox_event(p.run_id, n, "network_granted", ran.backend, granted)
    if attempt_id is not None:
        resolution = "deferred" if result.deferred is not None else "ran"
        await p.store.close_attempt(attempt_id, journal_form(result), resolution)
    return result


def _net(verdict: Verdict) -> NetVerdict:
    return NetVerdict(verdict.effect, verdict.rule, verdict.layer)


def _names_or_cannot_refuse(s: RunState, act: Act, rel: str) -> bool:
    """Whether a file with other names (hard links) may be read or written as `rel`.

    Its other names cannot be checked, so only when no name could be refused (no deny or ask rule
    for the act, and its default allows) or an allow rule names `rel` exactly.
    """
    policy: Policy = s.rules.effective()
    rules = [r for layer in policy.layers for r in layer.rules if r.act is act]
    if policy.defaults.of(act) is Effect.ALLOW and all(r.effect is Effect.ALLOW for r in rules):
        return True
    named = any(r.effect is Effect.ALLOW and r.pattern == rel for r in rules)
    return named and policy.check(act, rel) is Effect.ALLOW


def tool_row(call: ToolCall, result: ToolResult) -> CallRecord:
    """The trace row of a finished call."""
    return CallRecord(
        call.id,
        call.name,
        dict(call.arguments),
        result.ok,
        result.refused,
        result.summary,
        result.output,
    )

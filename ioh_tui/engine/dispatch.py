"""Dispatching one tool call: announce it, gate it, run it, journal effects that must not repeat."""

from __future__ import annotations

from collections.abc import Mapping

from ioh_tui.core import events as ev
from ioh_tui.core.acts import Act, Effect
from ioh_tui.core.transcript import ToolCall
from ioh_tui.engine.gate import Preset, RunGate
from ioh_tui.engine.gatework import trace_command
from ioh_tui.engine.recovery import replay
from ioh_tui.engine.state import Drive
from ioh_tui.policy import ApprovalRequest
from ioh_tui.store import CallRecord
from ioh_tui.tools import ToolContext, ToolResult

_OUTPUT_EVENT_CHARS = 4000
"""Live output is forwarded to observers in pieces of at most this size."""


async def dispatch_call(
    d: Drive, n: int, position: int, call: ToolCall, preset: Preset | None
) -> ToolResult:
    """Run one call and announce it before and after; every failure is an observation."""
    who = d.who.fields()
    d.bus.emit(
        ev.ToolCallStarted(
            **who, step=n, call_id=call.id, name=call.name, arguments=dict(call.arguments)
        )
    )
    replayed = None if preset is not None else await replay(d, n, position, call)
    if replayed is not None:
        result = replayed
    elif call.arguments_error is not None:
        result = ToolResult(
            f"[{call.name} error] the arguments were not a JSON object: "
            f"{call.arguments_error[:500]}",
            ok=False,
        )
    else:
        result = await _run(d, n, position, call, preset)
    if result.deferred is None:
        d.bus.emit(
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


async def _run(
    d: Drive, n: int, position: int, call: ToolCall, preset: Preset | None
) -> ToolResult:
    tool = d.tools.get(call.name)
    who = d.who.fields()

    def on_output(text: str) -> None:
        for i in range(0, len(text), _OUTPUT_EVENT_CHARS):
            d.bus.emit(
                ev.ToolOutput(
                    **who, step=n, call_id=call.id, text=text[i : i + _OUTPUT_EVENT_CHARS]
                )
            )

    gate = RunGate(
        state=d.gate,
        workspace=d.workspace,
        approver=d.approver,
        store=d.store,
        emit=d.bus.emit,
        cancel=d.cancel,
        base=ApprovalRequest(
            act=Act.READ,
            target="",
            run_id=d.run_id,
            agent_id=d.who.agent_id,
            agent_label=d.agent_label,
            step=n,
            goal=d.contract.goal,
            tool=call.name,
        ),
        who=d.who,
        call_id=call.id,
        preset=preset,
    )
    ctx = ToolContext(
        workspace=d.workspace,
        gate=gate,
        visible=lambda rel: gate.verdict(Act.READ, rel).effect is not Effect.DENY,
        sandbox=d.sandbox,
        exec_timeout_s=d.contract.exec_timeout_s,
        subject=d.contract.subject,
        on_output=on_output,
        toolchain=d.toolchain,
    )
    attempt_id = None
    if tool is not None and tool.mutating:
        attempt_id = opened = await d.store.open_attempt(
            d.run_id, n, position, call.id, call.name, dict(call.arguments)
        )

        async def journal(intent: dict[str, object]) -> None:
            await d.store.note_intent(opened, intent)

        ctx.journal = journal
    result = await d.cancel.guard(d.tools.dispatch(call.name, call.arguments, ctx))
    if "argv" in result.meta:
        await record_command(d, n, result.meta)
    if attempt_id is not None:
        resolution = "deferred" if result.deferred is not None else "ran"
        await d.store.close_attempt(attempt_id, _journal_form(result), resolution)
    return result


async def record_command(d: Drive, n: int, meta: Mapping[str, object]) -> None:
    """The trace of one sandboxed command: what ran, under which backend, and any cap it hit."""
    backend = str(meta.get("backend", d.sandbox.backend))
    await trace_command(d.store, d.run_id, n, backend, meta["argv"], meta.get("cap_hit"))


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


def _journal_form(result: ToolResult) -> dict[str, object]:
    return {
        "output": result.output,
        "ok": result.ok,
        "refused": result.refused,
        "changed": result.changed,
    }

"""Crash recovery: what an interrupted step left behind, and how a resume uses it.

A step's model turn is staged in the store as soon as it arrives, so a resume never asks (or pays)
for it again. Every call with an effect is journalled: opened before it runs, given its intent
(the path and digest of what a write is about to write) just before the effect, closed after.
Resuming the same uncommitted step:
- a closed entry: its recorded result is reused, nothing runs again;
- an open write whose intended content is on disk: it happened; its result is rebuilt;
- an open write whose content is not on disk: it never happened, so it runs;
- an open command or MCP call (a tool with a `cut_ask`): its effect cannot be known, so the run
  pauses for the operator (approve: make it again; deny: skip it), as a decision on the act the
  call decides, with rule `interrupted` in layer `recovery`;
- any other open entry: its tool bears repeating (or journals an intent first), so it runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ioh_tui.core import events as ev
from ioh_tui.core.codec import image_from_json, image_to_json
from ioh_tui.core.transcript import ToolCall
from ioh_tui.engine.bus import EventBus
from ioh_tui.engine.ids import Who
from ioh_tui.store import AttemptRow, Store
from ioh_tui.tools import ToolResult
from ioh_tui.tools.base import Asked
from ioh_tui.tools.files import content_hash

RECOVERY_RULE = "interrupted"
RECOVERY_LAYER = "recovery"


class Interrupted:
    """A journalled call whose effect its drive's death left unknown: only the operator can say."""


INTERRUPTED = Interrupted()


def journal_form(result: ToolResult) -> dict[str, object]:
    """What the journal keeps of a finished call: all `replay` gives back.

    Its images too (bytes in base64, as `messages.images` keeps them): an MCP tool's image is
    sent with its result, and a replayed call must send the same request.
    """
    form: dict[str, object] = {
        "output": result.output,
        "ok": result.ok,
        "refused": result.refused,
        "changed": result.changed,
    }
    if result.images:
        form["images"] = [image_to_json(i) for i in result.images]
    return form


def replay(
    journal: Mapping[tuple[int, int], AttemptRow],
    root: Path,
    n: int,
    position: int,
    call: ToolCall,
    *,
    unknowable: bool,
) -> ToolResult | Interrupted | None:
    """The result of a call an interrupted drive already made, or None when it must run.

    `INTERRUPTED` when it was cut and `unknowable` (its tool has a `cut_ask`: a command, an MCP
    call), so its effect cannot be known (`ask_operator`).
    """
    entry = journal.get((n, position))
    if entry is None or entry.name != call.name or entry.arguments != dict(call.arguments):
        return None
    result = entry.result
    if entry.completed_at is not None and result is not None:
        return ToolResult(
            str(result["output"]),
            ok=bool(result["ok"]),
            refused=bool(result["refused"]),
            changed=bool(result["changed"]),
            images=tuple(image_from_json(i) for i in result.get("images", ())),
        )
    intent = entry.intent
    if intent is not None:
        path = root / str(intent["path"])
        try:
            on_disk = content_hash(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError):
            on_disk = None
        if on_disk == intent["sha256"]:
            return ToolResult(str(intent["output"]), changed=True)
        return None
    return INTERRUPTED if unknowable else None


async def ask_operator(
    store: Store,
    bus: EventBus,
    who: Who,
    run_id: int,
    agent_label: str,
    n: int,
    call: ToolCall,
    asked: Asked,
) -> ToolResult:
    """Pause on a cut call: the operator decides whether it is made again.

    `asked` is the act and target the call's tool decides, so an answer is the preset its
    decision takes when the resume makes the call.
    """
    request_id = await store.create_approval(
        run_id,
        n,
        {
            "call_id": call.id,
            "tool": call.name,
            "act": asked.act.value,
            "target": asked.target,
            "content": asked.content,
            "rule": RECOVERY_RULE,
            "layer": RECOVERY_LAYER,
            "agent_label": agent_label,
        },
    )
    bus.emit(
        ev.ApprovalRequested(
            **who.fields(),
            request_id=request_id,
            act=asked.act.value,
            target=asked.target,
            rule=RECOVERY_RULE,
            layer=RECOVERY_LAYER,
            step=n,
            content=asked.content,
        )
    )
    return ToolResult(f"[{call.name} interrupted]", ok=False, deferred=request_id)

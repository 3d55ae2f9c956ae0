"""Crash recovery: what an interrupted step left behind, and how a resume uses it.

A step's model turn is staged in the store as soon as it arrives, so a resume never asks (or pays)
for it again. Every call with an effect is journalled: opened before it runs, given its intent
(the path and digest of what a write is about to write) just before the effect, closed after.
Resuming the same uncommitted step:
- a closed entry: its recorded result is reused, nothing runs again;
- an open write whose intended content is on disk: it happened; its result is rebuilt;
- an open write whose content is not on disk: it never happened, so it runs;
- an open command: its effect cannot be known, so the run pauses for the operator (approve: run
  it again; deny: skip it), as a decision with rule `interrupted` in layer `recovery`.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from pathlib import Path

from ioh_tui.core import events as ev
from ioh_tui.core.codec import image_from_json, image_to_json
from ioh_tui.core.transcript import ToolCall
from ioh_tui.engine.bus import EventBus
from ioh_tui.engine.ids import Who
from ioh_tui.store import AttemptRow, Store
from ioh_tui.tools import ToolResult
from ioh_tui.tools.files import content_hash

RECOVERY_RULE = "interrupted"
RECOVERY_LAYER = "recovery"


class Interrupted:
    """A journalled command that was running when its drive died: only the operator can say."""


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
) -> ToolResult | Interrupted | None:
    """The result of a call an interrupted drive already made, or None when it must run.

    `INTERRUPTED` when it was a command whose effect cannot be known (`ask_operator`).
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
    if call.name != "exec":
        return None
    return INTERRUPTED


async def ask_operator(
    store: Store, bus: EventBus, who: Who, run_id: int, agent_label: str, n: int, call: ToolCall
) -> ToolResult:
    """Pause on an interrupted command: the operator decides whether it runs again."""
    argv = call.arguments.get("argv")
    line = shlex.join(argv) if isinstance(argv, list) else str(argv)
    request_id = await store.create_approval(
        run_id,
        n,
        {
            "call_id": call.id,
            "tool": call.name,
            "act": "exec",
            "target": line,
            "rule": RECOVERY_RULE,
            "layer": RECOVERY_LAYER,
            "agent_label": agent_label,
        },
    )
    bus.emit(
        ev.ApprovalRequested(
            **who.fields(),
            request_id=request_id,
            act="exec",
            target=line,
            rule=RECOVERY_RULE,
            layer=RECOVERY_LAYER,
            step=n,
        )
    )
    return ToolResult("[exec interrupted]", ok=False, deferred=request_id)

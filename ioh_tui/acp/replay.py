"""A stored run as the updates `session/load` replays: the goal, what the model said, its calls.

Read from the store's committed transcript and tool calls, so a run replays the same from any
process. Streamed thinking is not stored, so a replay has no thought chunks; an edit's diff is
the one its arguments carry (the file as it was before is not kept).
"""

from __future__ import annotations

from pathlib import Path

from acp import (
    start_tool_call,
    text_block,
    tool_content,
    tool_diff_content,
    update_agent_message_text,
    update_user_message_text,
)
from acp.schema import ToolCallStart, ToolCallStatus, UserMessageChunk

from ioh_tui.acp.updates import MAX_SHOWN, Content, Update, tool_kind, tool_title
from ioh_tui.store import Store
from ioh_tui.store.rows import ToolCallRow


async def replayed(store: Store, run_id: int) -> list[Update | UserMessageChunk]:
    """The updates that show run `run_id` again, in the order it happened.

    Raises:
        ResumeError: No such run.
    """
    run = await store.run(run_id)
    root = Path(run.root)
    done = {(row.step, row.call_id): row for row in await store.tool_calls(run_id)}
    shown: list[Update | UserMessageChunk] = [update_user_message_text(run.goal)]
    for message in await store.messages(run_id):
        if message.role != "assistant":
            continue
        if message.content:
            shown.append(update_agent_message_text(message.content))
        for call in message.tool_calls:
            row = done.get((message.step, call.id))
            shown.append(_call(root, message.step, call.id, call.name, dict(call.arguments), row))
    outcome = run.outcome or run.status
    detail = f": {run.detail}" if run.detail else ""
    shown.append(
        update_agent_message_text(
            f"\n\n(run {run_id} {outcome} after {run.steps} step{'' if run.steps == 1 else 's'}"
            f", {run.tokens:,} tokens{detail})"
        )
    )
    return shown


def _call(
    root: Path,
    step: int,
    call_id: str,
    name: str,
    arguments: dict[str, object],
    row: ToolCallRow | None,
) -> ToolCallStart:
    content: list[Content] = []
    path = arguments.get("path")
    if isinstance(path, str) and name in ("write_file", "edit_file"):
        where = str((root / path).resolve())
        if name == "write_file" and isinstance(new := arguments.get("content"), str):
            content.append(tool_diff_content(where, new))
        elif isinstance(old := arguments.get("old_text"), str) and isinstance(
            new := arguments.get("new_text"), str
        ):
            content.append(tool_diff_content(where, new, old))
    if row is not None:
        shown = f"refused: {row.summary}" if row.refused else (row.output or row.summary)
        if shown:
            content.append(tool_content(text_block(shown[:MAX_SHOWN])))
    status: ToolCallStatus = "failed" if row is None or not row.ok else "completed"
    return start_tool_call(
        f"{step}-{call_id}",
        tool_title(name, arguments),
        kind=tool_kind(name),
        status=status,
        content=content or None,
        raw_input=arguments,
    )

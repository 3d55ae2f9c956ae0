"""The `note` tool: the agent's short durable notes (what it learned, what is left).

The engine keeps each accepted note in the run's state and pins every note into each later turn's
context, so notes outlive compaction; they are read back from the committed transcript on resume.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ioh_tui.tools.base import ToolContext, ToolResult

NOTE = "note"
MAX_NOTE_CHARS = 500


async def note(args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
    """Accept one note (its text is checked; the engine keeps it)."""
    text = args.get("text")
    if not isinstance(text, str) or not text.strip():
        return ToolResult("[note refused] text must be a non-empty string", ok=False)
    if any(_control(c) for c in text):
        # A note is pinned in every request and printed by `exec`: no escape sequence rides it.
        return ToolResult("[note refused] a note is plain text: no control characters", ok=False)
    if len(text) > MAX_NOTE_CHARS:
        return ToolResult(
            f"[note refused] a note is at most {MAX_NOTE_CHARS} characters; this one is "
            f"{len(text):,}: keep what matters",
            ok=False,
        )
    return ToolResult(f"[noted] {text.strip()}")


def _control(char: str) -> bool:
    """A C0 or C1 control character other than newline and tab."""
    code = ord(char)
    return char not in "\n\t" and (code < 0x20 or 0x7F <= code < 0xA0)

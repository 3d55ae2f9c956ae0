"""A whole answer cut into stream pieces, the way the doubles and a replayed recording stream it.

One cut for every answer that is not really streamed: the scripted provider, the loopback fake
server (so "disconnect after N chunks" cuts both at the same place) and `--replay`.
"""

from __future__ import annotations

import json

from ioh_tui.core.transcript import (
    Completion,
    StreamPiece,
    TextPiece,
    ThinkingPiece,
    ToolCallPiece,
)


def chunks(text: str, size: int = 12) -> list[str]:
    """Cut text into stream pieces (never splitting inside a character)."""
    return [text[i : i + size] for i in range(0, len(text), size)] if text else []


def completion_pieces(completion: Completion) -> list[StreamPiece]:
    """Thinking, then text, then each tool call (its name first, then its arguments' JSON)."""
    pieces: list[StreamPiece] = [ThinkingPiece(c) for c in chunks(completion.thinking)]
    pieces += [TextPiece(c) for c in chunks(completion.text)]
    for i, call in enumerate(completion.tool_calls):
        pieces.append(ToolCallPiece(i, call.id, call.name, ""))
        arguments = json.dumps(dict(call.arguments))
        pieces += [ToolCallPiece(i, arguments=c) for c in chunks(arguments, 24)]
    return pieces

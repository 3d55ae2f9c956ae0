"""What both wire assemblers share: streaming pieces out, timing, and tool-call accumulation.

Tool calls arrive in fragments keyed by a wire index (OpenAI `index`, Anthropic block `index`).
Arguments are concatenated and parsed only at the end: an empty string is `{}`, and text that is
not a JSON object becomes `ToolCall(arguments={}, arguments_error=<raw text>)`, so the model can
be told; a call is never dropped for bad arguments.

Ids: the wire id is kept when it is present and unique, both within the completion and against
the ids already in the request's transcript. Otherwise (missing, or repeated, as Ollama's
`call_<0..998>` ids can be) a fresh id is minted when the call's first fragment arrives, so every
piece of a call carries the id the final `ToolCall` will have.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from ioh_tui.core.errors import ProviderError
from ioh_tui.core.transcript import (
    Request,
    StreamSink,
    TextPiece,
    ThinkingPiece,
    ToolCall,
    ToolCallPiece,
)

Clock = Callable[[], float]


def transcript_call_ids(request: Request) -> set[str]:
    """Every tool-call id the request's transcript already uses."""
    ids = {call.id for message in request.messages for call in message.tool_calls}
    ids.update(m.tool_call_id for m in request.messages if m.tool_call_id)
    return ids


def parse_arguments(raw: str) -> tuple[dict[str, Any], str | None]:
    """Arguments text to a dict, and the raw text when it was not a JSON object."""
    if not raw.strip():
        return {}, None
    try:
        value = json.loads(raw)
    except ValueError:
        return {}, raw
    if isinstance(value, dict):
        return value, None
    return {}, raw


@dataclass(slots=True)
class _PendingCall:
    position: int
    id: str
    name: str
    parts: list[str] = field(default_factory=list)


class ToolCallAccumulator:
    """Collects tool-call fragments by wire key, in order of first appearance."""

    def __init__(self, emit: Callable[[ToolCallPiece], None], used_ids: Iterable[str] = ()):
        self._emit = emit
        self._calls: dict[int, _PendingCall] = {}
        self._used = set(used_ids)

    def __contains__(self, key: int) -> bool:
        return key in self._calls

    def __len__(self) -> int:
        return len(self._calls)

    def fragment(
        self, key: int, *, wire_id: str | None = None, name: str | None = None, arguments: str = ""
    ) -> None:
        """Add one fragment; the first fragment for `key` opens the call."""
        call = self._calls.get(key)
        if call is None:
            call = _PendingCall(len(self._calls), self._claim(wire_id), name or "")
            self._calls[key] = call
            if arguments:
                call.parts.append(arguments)
            self._emit(ToolCallPiece(call.position, call.id, call.name or None, arguments))
            return
        new_name = None
        if name and not call.name:
            call.name = new_name = name
        if arguments:
            call.parts.append(arguments)
        if arguments or new_name:
            self._emit(ToolCallPiece(call.position, None, new_name, arguments))

    def finish(self) -> tuple[ToolCall, ...]:
        """The calls, arguments parsed; a call with neither name nor arguments is noise."""
        calls = []
        for call in self._calls.values():
            raw = "".join(call.parts)
            if not call.name and not raw:
                continue
            arguments, error = parse_arguments(raw)
            calls.append(ToolCall(call.id, call.name, arguments, error))
        return tuple(calls)

    def _claim(self, wire_id: str | None) -> str:
        if wire_id and wire_id not in self._used:
            self._used.add(wire_id)
            return wire_id
        while True:
            minted = f"call_{secrets.token_hex(12)}"
            if minted not in self._used:
                self._used.add(minted)
                return minted


class PieceStream:
    """Text, thinking and timing: the part of an assembler that talks to `on_piece`."""

    def __init__(
        self,
        on_piece: StreamSink | None,
        *,
        used_ids: Iterable[str] = (),
        started: float | None = None,
        clock: Clock = time.monotonic,
    ) -> None:
        self._sink = on_piece
        self._clock = clock
        self.started = clock() if started is None else started
        self.first_content_at: float | None = None
        self.text_parts: list[str] = []
        self.thinking_parts: list[str] = []
        self.tool_calls = ToolCallAccumulator(self._emit_call, used_ids)

    def text(self, fragment: str) -> None:
        """A fragment of the answer."""
        self._mark()
        self.text_parts.append(fragment)
        if self._sink is not None:
            self._sink(TextPiece(fragment))

    def thinking(self, fragment: str) -> None:
        """A fragment of reasoning."""
        self._mark()
        self.thinking_parts.append(fragment)
        if self._sink is not None:
            self._sink(ThinkingPiece(fragment))

    def timing(self) -> tuple[float | None, float]:
        """Time to first content and total latency, in milliseconds."""
        now = self._clock()
        ttft = None if self.first_content_at is None else self.first_content_at - self.started
        return (None if ttft is None else ttft * 1000), (now - self.started) * 1000

    def _emit_call(self, piece: ToolCallPiece) -> None:
        self._mark()
        if self._sink is not None:
            self._sink(piece)

    def _mark(self) -> None:
        if self.first_content_at is None:
            self.first_content_at = self._clock()


def event_json(data: str) -> dict[str, Any] | None:
    """An event's data as a JSON object; None for an empty keep-alive; `malformed` otherwise."""
    if not data or data.isspace():
        return None
    try:
        value = json.loads(data)
    except ValueError:
        raise ProviderError("malformed", f"a stream event is not JSON: {data[:120]!r}") from None
    if not isinstance(value, dict):
        raise ProviderError("malformed", f"a stream event is not an object: {data[:120]!r}")
    return value


def as_int(value: object) -> int:
    """A token count from a JSON value; anything that is not a count is 0."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0
    return max(0, int(value))


def as_mapping(value: object) -> dict[str, Any]:
    """A JSON object, or an empty one for null and anything else."""
    return value if isinstance(value, dict) else {}

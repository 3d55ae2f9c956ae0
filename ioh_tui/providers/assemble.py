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
from typing import Any, Protocol, TypeVar

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


class _Data(Protocol):
    """An event as `TextShape.feed_all` reads it (`sse.ServerSentEvent`, a layer beside this)."""

    @property
    def data(self) -> str:
        """The event's data."""
        ...


_Event = TypeVar("_Event", bound=_Data)

scanstring: Callable[[str, int, bool], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]
"""The JSON string-literal decoder `json.loads` itself uses (C), absent from typeshed's stubs."""


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
        if self.first_content_at is None:
            self.first_content_at = self._clock()
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


class TextShape:
    """The shape of a stream's text-only events, learned once, so the rest skip `json.loads`.

    A stream's text events differ only in their text: an OpenAI chunk repeats its id, model and
    fingerprint around `delta.content`. Once one event has been decoded in full and found to do
    nothing but carry text, the bytes before and after its text's string literal are kept. A
    later event with exactly those bytes around one complete JSON string literal is that same
    object with another text (a JSON string token is self-delimiting: swapping it for another
    changes nothing else), so decoding the literal alone (`scanstring`, strict as `json.loads`)
    is a full decode and a full validation. Anything else takes the full path.

    Where the literal sits is found, not assumed: each place the text's encoding occurs is
    tried by decoding the event with a probe string there, and kept only if the probe comes out
    as the text. A stream where no place passes keeps the full path for every event.
    """

    __slots__ = ("_prefix", "_start", "_suffix", "_suffix_len", "_tries")

    _PROBE = "\u00b6probe"
    _TRIES = 8
    """Shapes learned at most, a stream (each costs one more `json.loads`)."""

    def __init__(self) -> None:
        self._prefix: str | None = None
        self._suffix = ""
        self._start = self._suffix_len = 0
        self._tries = self._TRIES

    def text(self, data: str) -> str | None:
        """The text of `data` when it has the learned shape, else None (decode it in full)."""
        prefix = self._prefix
        if prefix is None or not data.startswith(prefix) or not data.endswith(self._suffix):
            return None
        start = self._start
        end = len(data) - self._suffix_len
        if end <= start or data[start] != '"':
            return None
        try:
            value, stop = scanstring(data, start + 1, True)
        except ValueError:
            return None
        return value if stop == end else None

    def streamed(self, data: str, out: PieceStream) -> bool:
        """Whether `data` had the learned shape; its text, if any, has then gone to `out`.

        All such an event does: the assembler skips its full path for it.
        """
        text = self.text(data)
        if text is None:
            return False
        if text:
            out.text(text)
        return True

    def feed_all(
        self, events: Iterable[_Event], out: PieceStream, decoded: Callable[[_Event], bool]
    ) -> bool:
        """An assembler's `feed_all`: each event's text to `out`, or `decoded(event)` for the rest.

        One call a network chunk: an event of the learned shape costs its string literal's
        decode, not a chain of calls, and the texts of a run of such events go to `out` as one
        piece (their concatenation is the same text; a piece and its sink's call cost as much
        as the decode). True as soon as `decoded` says the stream's terminator arrived (the
        events after it are not read, as `feed` would not be called).
        """
        text = self.text
        texts: list[str] = []
        for event in events:
            said = text(event.data)
            if said is None:
                if texts:
                    out.text("".join(texts))  # before the event: pieces keep the wire's order
                    texts = []
                if decoded(event):
                    return True
            elif said:
                texts.append(said)
        if texts:
            out.text("".join(texts))
        return False

    def learn(self, data: str, text: str, text_of: Callable[[dict[str, Any]], object]) -> None:
        """Learn the shape from `data`, a text-only event whose text is `text`.

        Called for a text-only event the learned shape missed (the first chunk of an OpenAI
        stream also carries the role, the rest do not): the newer shape replaces it, a bounded
        number of times. `text_of` reads the text out of a decoded event (None when it has none).
        """
        if self._tries <= 0:
            return
        self._tries -= 1
        for literal in {json.dumps(text), json.dumps(text, ensure_ascii=False)}:
            at = data.find(literal)
            while at >= 0:
                prefix, suffix = data[:at], data[at + len(literal) :]
                try:
                    probe = json.loads(prefix + json.dumps(self._PROBE) + suffix)
                except ValueError:
                    probe = None
                if isinstance(probe, dict) and text_of(probe) == self._PROBE:
                    self._prefix, self._suffix = prefix, suffix
                    self._start, self._suffix_len = len(prefix), len(suffix)
                    return
                at = data.find(literal, at + 1)


def as_int(value: object) -> int:
    """A token count from a JSON value; anything that is not a count is 0."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0
    return max(0, int(value))


def as_mapping(value: object) -> dict[str, Any]:
    """A JSON object, or an empty one for null and anything else."""
    return value if isinstance(value, dict) else {}

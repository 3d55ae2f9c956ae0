"""Server-sent events: line decoder, event decoder, and an async iterator over response bytes.

Layered like httpx-sse and written to the WHATWG event-stream rules:

- Bytes are decoded as UTF-8 incrementally, so a character split across network chunks is
  joined, and one leading byte-order mark is dropped. Invalid bytes become U+FFFD.
- A line ends in CRLF, LF or CR. A CR that ends one network chunk ends its line at once (no
  waiting), and an LF that starts the next chunk is then swallowed rather than read as a blank
  line (which would dispatch an event early).
- A line starting with `:` is a comment (keep-alives such as `: OPENROUTER PROCESSING`).
- `field:value` with one leading space of the value stripped; a line without a colon is a field
  with an empty value. Fields are `event`, `data`, `id` (ignored when it holds NUL) and `retry`
  (only ASCII digits); any other field is ignored.
- Several `data` lines are joined with a newline. A blank line dispatches the event, but only when
  at least one `data` line was seen (`event: x` alone dispatches nothing). A `data:` line with
  an empty value does dispatch, with `data == ""`; the wire layers skip such keep-alives.
- `id` persists across events (it is the stream's last event id); `retry` is reported on the
  event whose block carried it.

Decision, end of stream: an event that is not followed by a blank line is dropped, as the
WHATWG rules and both official SDKs do. Nothing is guessed from a half-received event. A stream
that ends that way has therefore lost its terminator (`[DONE]`, `message_stop`), and the wire
layer reports it as `truncated`, which is retried.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import AsyncGenerator, AsyncIterable, Iterable, Iterator
from typing import NamedTuple

_LINE_END = re.compile(r"\r\n|\r|\n")
_BOM = "\ufeff"


class ServerSentEvent(NamedTuple):
    """One dispatched event.

    A named tuple: built once per event, it costs a tenth of a frozen dataclass, and is as
    immutable.
    """

    event: str = "message"
    """The `event` field, or `message` when the block had none."""
    data: str = ""
    """The `data` lines joined with newlines."""
    id: str = ""
    """The last event id seen on the stream so far."""
    retry: int | None = None
    """The reconnection time in milliseconds, when this event's block set one."""


class LineDecoder:
    """Turns network chunks into complete lines (without their line ends)."""

    __slots__ = ("_buffer", "_decoder", "_started", "_swallow_lf")

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._buffer = ""
        self._swallow_lf = False
        self._started = False

    def decode(self, chunk: bytes) -> list[str]:
        """The lines completed by `chunk`; an unfinished line is kept for the next call."""
        return self._split(self._decoder.decode(chunk))

    def flush(self) -> list[str]:
        """At end of stream: finish decoding and return any line still pending.

        The pending line had no line end; `EventDecoder` can never dispatch on it, but a caller
        that wants to see it (tests, diagnostics) can.
        """
        lines = self._split(self._decoder.decode(b"", final=True))
        if self._buffer:
            lines.append(self._buffer)
            self._buffer = ""
        return lines

    def _split(self, text: str) -> list[str]:
        if not text:
            return []
        if not self._started:
            self._started = True
            if text.startswith(_BOM):
                text = text[1:]
        if self._swallow_lf:
            self._swallow_lf = False
            if text.startswith("\n"):
                text = text[1:]
        if "\r" in text:
            # Lone CR and CRLF are rare on real streams; plain LF takes the fast path below.
            parts = _LINE_END.split(self._buffer + text)
            self._swallow_lf = text.endswith("\r")
        elif "\n" in text:
            parts = (self._buffer + text).split("\n")
        else:
            self._buffer += text
            return []
        self._buffer = parts.pop()
        return parts


class EventDecoder:
    """Turns lines into events, one line at a time."""

    __slots__ = ("_data", "_event", "_last_id", "_retry")

    def __init__(self) -> None:
        self._event = ""
        self._data: list[str] = []
        self._last_id = ""
        self._retry: int | None = None

    def decode(self, line: str) -> ServerSentEvent | None:
        """Feed one line; returns the event a blank line dispatches, else None."""
        if not line:
            return self._dispatch()
        if line[0] == ":":
            return None
        name, _, value = line.partition(":")
        if value[:1] == " ":
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id":
            if "\0" not in value:
                self._last_id = value
        elif name == "retry" and value.isascii() and value.isdigit():
            self._retry = int(value)
        return None

    def feed(self, lines: Iterable[str]) -> list[ServerSentEvent]:
        """The events `lines` dispatch, in order: `decode` of each line.

        The two lines nearly every event is made of (`data: ...` and the blank line) are
        handled inline: one call a network chunk instead of one a line.
        """
        out = []
        for line in lines:
            if line.startswith("data: "):
                self._data.append(line[6:])
            elif line:
                self.decode(line)  # a non-blank line never dispatches
            elif len(self._data) == 1 and not self._event and self._retry is None:
                # One data line, no name, no retry: the event nearly every stream is made of.
                out.append(ServerSentEvent("message", self._data[0], self._last_id))
                self._data = []
            else:
                event = self._dispatch()
                if event is not None:
                    out.append(event)
        return out

    @property
    def last_id(self) -> str:
        """The last event id seen on the stream so far."""
        return self._last_id

    def _dispatch(self) -> ServerSentEvent | None:
        data, event, retry = self._data, self._event, self._retry
        self._data, self._event, self._retry = [], "", None
        if not data:
            return None
        return ServerSentEvent(
            event=event or "message",
            data=data[0] if len(data) == 1 else "\n".join(data),
            id=self._last_id,
            retry=retry,
        )


_tuple = tuple.__new__


class EventStream:
    r"""Network chunks to events, one call a chunk: `LineDecoder` and `EventDecoder` in one.

    The text is cut at blank lines (`split("\n\n")`, in C) into blocks, each an event's lines;
    a block that is one `data: ` line, nearly every event of a model's stream, becomes its event
    at once, and any other block goes through `EventDecoder` line by line. Line ends are made LF
    first (CRLF and lone CR, with a CR that ends one chunk swallowing an LF that starts the
    next), so the rules are exactly `LineDecoder`'s and `EventDecoder`'s
    (`tests/unit/providers/test_sse_decoder.py` compares the two on any stream cut anywhere).
    """

    __slots__ = ("_cr", "_decoder", "_events", "_rest", "_started")

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._events = EventDecoder()
        self._rest: list[str] = []
        """Text after the last blank line: an event still being received."""
        self._cr = False
        self._started = False

    def decode(self, chunk: bytes) -> list[ServerSentEvent]:
        """The events `chunk` completes, in order; the rest is kept for the next call."""
        text = self._text(chunk)
        if not text:
            return []
        if "\n\n" not in text and text[0] != "\n":
            # No blank line can end here (the kept text never ends in a blank line).
            self._rest.append(text)
            return []
        if self._rest:
            text = "".join(self._rest) + text
            self._rest = []
        blocks = text.split("\n\n")
        rest = blocks.pop()
        if rest:
            self._rest.append(rest)
        events = self._events
        last_id = events.last_id
        out = []
        for block in blocks:
            if block.startswith("data: ") and "\n" not in block:
                # What `EventDecoder` makes of `data: X` and a blank line (its state is clear
                # after every blank line; only the last id carries over). Built as the tuple
                # it is: the named tuple's own `__new__` is a Python call, a third of the cost.
                out.append(_tuple(ServerSentEvent, ("message", block[6:], last_id, None)))
            else:
                out += events.feed([*block.split("\n"), ""])
                last_id = events.last_id
        return out

    def _text(self, chunk: bytes) -> str:
        """`chunk` decoded, the stream's BOM dropped, and every line end made LF."""
        text = self._decoder.decode(chunk)
        if not text:
            return ""
        if not self._started:
            self._started = True
            if text[0] == _BOM:
                text = text[1:]
        if self._cr:
            self._cr = False
            if text[:1] == "\n":
                text = text[1:]
        if "\r" in text:
            self._cr = text[-1] == "\r"
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        return text


def iter_sse(chunks: Iterable[bytes]) -> Iterator[ServerSentEvent]:
    """The events of a byte stream given as an iterable of network chunks."""
    stream = EventStream()
    for chunk in chunks:
        yield from stream.decode(chunk)


async def aiter_sse(chunks: AsyncIterable[bytes]) -> AsyncGenerator[ServerSentEvent, None]:
    """The events of an async byte stream, e.g. `httpx.Response.aiter_bytes()`.

    The final event is dropped when no blank line follows it (see the module docstring).
    """
    stream = EventStream()
    async for chunk in chunks:
        for event in stream.decode(chunk):
            yield event

"""Just enough HTTP/1.1 for the fake model server: read a request, write a JSON or streamed reply.

Requests carry a Content-Length body (what every SDK and our own client send). Streams go out with
chunked framing on HTTP/1.1, so a connection cut mid-stream reads as an incomplete body (a transport
error) and never as a clean end; HTTP/1.0 clients get a close-delimited stream.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from http import HTTPStatus

_MAX_BODY = 64 * 1024 * 1024


@dataclass(slots=True)
class HttpRequest:
    """One request as read off the connection."""

    method: str
    target: str
    version: str
    headers: dict[str, str]
    """Lower-cased names."""
    body: bytes = field(repr=False)


class BadRequest(Exception):
    """The bytes on the connection were not an HTTP request we can read."""


class Responder:
    """Writes one response: a JSON body with a length, or an event stream chunk by chunk."""

    def __init__(self, writer: asyncio.StreamWriter, *, chunked: bool, keep_alive: bool) -> None:
        self._writer = writer
        self._chunked = chunked
        # An HTTP/1.0 stream can only end by closing, so it never keeps the connection.
        self.keep_alive = keep_alive and chunked

    def _head(self, status: int, headers: dict[str, str]) -> bytes:
        try:
            reason = HTTPStatus(status).phrase
        except ValueError:
            reason = "Overloaded" if status == 529 else "Error"
        headers["Connection"] = "keep-alive" if self.keep_alive else "close"
        lines = [f"HTTP/1.1 {status} {reason}", *(f"{k}: {v}" for k, v in headers.items())]
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")

    async def json(self, status: int, body: bytes, extra: dict[str, str] | None = None) -> None:
        """Send a whole JSON reply with its length (plus `extra` headers)."""
        headers = {"Content-Type": "application/json", "Content-Length": str(len(body))}
        headers.update(extra or {})
        self._writer.write(self._head(status, headers) + body)
        await self._writer.drain()

    async def start_stream(self) -> None:
        """Send the head of a 200 event stream."""
        headers = {"Content-Type": "text/event-stream; charset=utf-8", "Cache-Control": "no-cache"}
        if self._chunked:
            headers["Transfer-Encoding"] = "chunked"
        self._writer.write(self._head(200, headers))
        await self._writer.drain()

    async def send(self, data: bytes) -> None:
        """Send one event and wait until the kernel has it (so pacing is real)."""
        self._writer.write(b"%x\r\n%s\r\n" % (len(data), data) if self._chunked else data)
        await self._writer.drain()

    async def end_stream(self) -> None:
        """End the stream cleanly (the terminal chunk)."""
        if self._chunked:
            self._writer.write(b"0\r\n\r\n")
            await self._writer.drain()


async def read_request(reader: asyncio.StreamReader) -> HttpRequest | None:
    """Read one request (None at a clean end of the connection)."""
    line = await reader.readline()
    if not line.strip():
        return None
    parts = line.decode("latin-1").split()
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        raise BadRequest(line[:80])
    headers: dict[str, str] = {}
    while (header := await reader.readline()) not in (b"\r\n", b"\n", b""):
        name, _, value = header.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    try:
        length = int(headers.get("content-length", "0"))
    except ValueError:
        raise BadRequest("bad Content-Length") from None
    if not 0 <= length <= _MAX_BODY:
        raise BadRequest("Content-Length out of range")
    # The whole body is read before answering: a client still sending when the server replies and
    # closes would see a reset instead of the reply.
    body = await reader.readexactly(length)
    return HttpRequest(parts[0], parts[1], parts[2], headers, body)

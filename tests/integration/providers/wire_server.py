"""A loopback HTTP server for provider tests: serves queued replies byte for byte.

stdlib only (ThreadingHTTPServer on 127.0.0.1 port 0, in a daemon thread), so the same bytes can
be served to our client and to the official SDKs. Replies can be chunked, close-delimited or
sized, written in small pieces, cut mid-body, or paused to look like a stalled stream.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

Framing = Literal["chunked", "close", "length"]


@dataclass
class Reply:
    """One queued response."""

    body: bytes = b""
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    framing: Framing = "chunked"
    piece: int = 0
    """Write the body in pieces of this many bytes (0: all at once)."""
    cut_after: int | None = None
    """Drop the connection after this many body bytes, without ending the body."""
    pause_after: int | None = None
    """Go silent for `pause_s` after this many body bytes."""
    pause_s: float = 0.0
    piece_delay_s: float = 0.0
    """Sleep between pieces (a slow trickle that is never silent for long)."""


@dataclass
class Received:
    """One request the server saw."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    client_port: int


class WireServer:
    """Serves queued `Reply`s in order; records every request."""

    def __init__(self) -> None:
        self.replies: list[Reply] = []
        self.received: list[Received] = []
        self._lock = threading.Lock()
        self._httpd = _QuietServer(("127.0.0.1", 0), _handler_for(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def url(self) -> str:
        """`http://127.0.0.1:PORT`."""
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def queue(self, *replies: Reply) -> None:
        """Add replies to serve, in order."""
        with self._lock:
            self.replies.extend(replies)

    def next_reply(self) -> Reply:
        """The next queued reply, or a 500 saying none was queued."""
        with self._lock:
            if self.replies:
                return self.replies.pop(0)
        return Reply(b'{"error":{"message":"no reply queued"}}', status=500, framing="length")

    def __enter__(self) -> WireServer:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        # Clients hang up early on purpose (after [DONE], on errors, on stall timeouts).
        pass


def _handler_for(server: WireServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            body = json.loads(raw) if raw else {}
            headers = {k.lower(): v for k, v in self.headers.items()}
            with server._lock:
                port = self.client_address[1]
                server.received.append(Received(self.path, headers, body, port))
            reply = server.next_reply()
            try:
                _send(self, reply)
            except (BrokenPipeError, ConnectionResetError):
                # Clients close early (after [DONE], on a stall timeout); that is expected.
                self.close_connection = True

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


def _send(handler: BaseHTTPRequestHandler, reply: Reply) -> None:
    handler.send_response(reply.status)
    is_error = reply.status >= 300
    content_type = "application/json" if is_error else "text/event-stream"
    headers = {"content-type": content_type, **reply.headers}
    for name, value in headers.items():
        handler.send_header(name, value)
    if reply.framing == "chunked":
        handler.send_header("transfer-encoding", "chunked")
    elif reply.framing == "length":
        handler.send_header("content-length", str(len(reply.body)))
    else:
        handler.send_header("connection", "close")
        handler.close_connection = True
    handler.end_headers()
    handler.wfile.flush()
    sent = 0
    for piece in _pieces(reply):
        if reply.cut_after is not None and sent + len(piece) > reply.cut_after:
            piece = piece[: reply.cut_after - sent]
            _write(handler, reply, piece)
            _hang_up(handler)
            return
        if reply.pause_after is not None and sent >= reply.pause_after and reply.pause_s:
            time.sleep(reply.pause_s)
            reply.pause_s = 0.0
        _write(handler, reply, piece)
        sent += len(piece)
        if reply.piece_delay_s:
            time.sleep(reply.piece_delay_s)
    if reply.cut_after is not None:
        _hang_up(handler)
        return
    if reply.framing == "chunked":
        handler.wfile.write(b"0\r\n\r\n")
        handler.wfile.flush()


def _pieces(reply: Reply) -> Iterator[bytes]:
    size = reply.piece or len(reply.body) or 1
    if reply.pause_after is not None and not reply.piece:
        yield reply.body[: reply.pause_after]
        yield reply.body[reply.pause_after :]
        return
    for start in range(0, len(reply.body), size):
        yield reply.body[start : start + size]


def _write(handler: BaseHTTPRequestHandler, reply: Reply, piece: bytes) -> None:
    if not piece:
        return
    if reply.framing == "chunked":
        handler.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
    else:
        handler.wfile.write(piece)
    handler.wfile.flush()


def _hang_up(handler: BaseHTTPRequestHandler) -> None:
    handler.wfile.flush()
    handler.close_connection = True
    # Shut the socket down so the client sees the cut now, not when the thread ends.
    handler.connection.shutdown(socket.SHUT_RDWR)

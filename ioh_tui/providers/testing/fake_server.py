"""A loopback model server that plays a scenario over the real OpenAI or Anthropic streaming wire.

It backs `ioh-tui serve-fake`, the demo and the wire-client tests. It means exactly what
`ScriptedProvider` means (interface.md §4): the turn is chosen by the number of assistant messages
in the request, a turn's scripted errors are served first (one per request, counted per agent and
turn on the server), then the answer streams in the scripted provider's own pieces.

Design: plain `asyncio.start_server` with just enough HTTP/1.1 (a request with Content-Length,
keep-alive, chunked responses). Chunked framing is what makes a scripted disconnect a *transport*
error for the client (an incomplete body) rather than a clean end of stream, and asyncio lets the
server live on the test's own event loop, so no thread has to be joined. It binds to loopback only.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import signal
import sys
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from ioh_tui.core.errors import ConfigError
from ioh_tui.providers.testing import fake_wire
from ioh_tui.providers.testing.fake_http import BadRequest, HttpRequest, Responder, read_request
from ioh_tui.providers.testing.fake_thinking import thinking_problem
from ioh_tui.providers.testing.scenario import (
    ErrorCursor,
    Scenario,
    ScriptedError,
    load_scenario,
    turn_usage,
)

LOOPBACK_HOSTS = ("127.0.0.1", "::1", "localhost")
_SECRET_HEADERS = ("authorization", "x-api-key")
# Idle keep-alive connections and half-sent requests are dropped rather than held forever.
_READ_TIMEOUT_S = 60.0


@dataclass(slots=True)
class RecordedRequest:
    """A request the server received (credentials redacted), and what it was answered with."""

    method: str
    path: str
    headers: dict[str, str]
    """Lower-cased names; `authorization` and `x-api-key` values are replaced by `<redacted>`."""
    body: Any
    """The decoded JSON body; None when there was none or it was not JSON."""
    agent: str | None = None
    """The `agents` key that answered ("" for the root scenario); None when no turn was chosen."""
    turn: int | None = None
    served: str = ""
    """`answer`, `http <status>`, `disconnect`, `stream_error`, or the refusal (`http 404`, ...)."""


class FakeModelServer:
    """Serve a `Scenario` on loopback as OpenAI chat completions or Anthropic messages.

    Use it as `async with FakeModelServer(scenario) as server:` and point a client at
    `server.base_url`; `server.requests` lists what arrived.

    Args:
        scenario: the scenario, or the path of a scenario file.
        wire: `openai` (POST /v1/chat/completions and /chat/completions) or `anthropic`
            (POST /v1/messages). Both also answer GET /v1/models.
        host: `127.0.0.1`, `::1` or `localhost` (served on 127.0.0.1); anything else is refused.
        port: the port; 0 picks a free one.

    Raises:
        ConfigError: a non-loopback host, an unknown wire, a bad port or scenario.
    """

    def __init__(
        self,
        scenario: Scenario | str | Path,
        wire: str = "openai",
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        if wire not in fake_wire.WIRES:
            raise ConfigError(f"unknown wire {wire!r} (choose openai or anthropic)")
        if host not in LOOPBACK_HOSTS:
            raise ConfigError(
                f"serve-fake binds to loopback only (127.0.0.1, ::1 or localhost), not {host!r}"
            )
        if not 0 <= port <= 65535:
            raise ConfigError(f"port must be 0-65535, not {port}")
        self.scenario = scenario if isinstance(scenario, Scenario) else load_scenario(scenario)
        self.wire = wire
        # "localhost" may resolve to both families, and port 0 would then give two ports.
        self._bind_host = "127.0.0.1" if host == "localhost" else host
        self._port = port
        self.requests: list[RecordedRequest] = []
        """Every request received, in arrival order."""
        self._agents = _flatten_agents(self.scenario)
        self._errors = ErrorCursor()
        self._ids = itertools.count(1)
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task[None]] = set()

    @property
    def port(self) -> int:
        """The bound port (after start)."""
        if self._server is None:
            raise RuntimeError("the fake server is not running")
        return int(self._server.sockets[0].getsockname()[1])

    @property
    def url(self) -> str:
        """`http://HOST:PORT`, the server's root."""
        host = f"[{self._bind_host}]" if ":" in self._bind_host else self._bind_host
        return f"http://{host}:{self.port}"

    @property
    def base_url(self) -> str:
        """A client's `base_url`: the root plus `/v1` for OpenAI, the root itself for Anthropic."""
        return f"{self.url}/v1" if self.wire == "openai" else self.url

    async def start(self) -> None:
        """Bind and start accepting connections."""
        self._server = await asyncio.start_server(
            self._serve_connection, self._bind_host, self._port
        )

    async def close(self) -> None:
        """Stop accepting, drop open connections, and wait until every handler has ended."""
        if self._server is None:
            return
        self._server.close()
        # Before 3.12, Server.close leaves accepted connections (and their handlers) running.
        for task in list(self._connections):
            task.cancel()
        await asyncio.gather(*self._connections, return_exceptions=True)
        await self._server.wait_closed()
        self._server = None

    async def __aenter__(self) -> FakeModelServer:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def _serve_connection(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        # With no write buffer, drain() returns only once the bytes are with the kernel, so a
        # scripted disconnect never swallows the events it was meant to let through.
        writer.transport.set_write_buffer_limits(0)
        try:
            while True:
                async with asyncio.timeout(_READ_TIMEOUT_S):
                    request = await read_request(reader)
                if request is None or not await self._respond(request, writer):
                    break
        except (BadRequest, ConnectionError, TimeoutError, asyncio.IncompleteReadError):
            pass
        except asyncio.CancelledError:
            # Only close() cancels a handler, and ending it cancelled makes 3.11's stream callback
            # log a spurious traceback (it calls task.exception() on a cancelled task).
            pass
        finally:
            self._connections.discard(task)
            writer.transport.abort()

    async def _respond(self, http: HttpRequest, writer: asyncio.StreamWriter) -> bool:
        """Answer one request; False when the connection must be closed afterwards."""
        keep_alive = http.version == "HTTP/1.1" and http.headers.get("connection") != "close"
        out = Responder(writer, chunked=http.version == "HTTP/1.1", keep_alive=keep_alive)
        path = http.target.split("?", 1)[0]
        try:
            body: Any = json.loads(http.body) if http.body else None
        except (UnicodeDecodeError, json.JSONDecodeError):
            body = None
        record = RecordedRequest(http.method, path, _redacted(http.headers), body)
        self.requests.append(record)
        completions = ("/v1/chat/completions", "/chat/completions")
        if path in (completions if self.wire == "openai" else ("/v1/messages",)):
            if http.method != "POST":
                return await self._refuse(out, record, 405, "use POST")
            return await self._complete(out, record, body)
        if path in ("/v1/models", "/models"):
            await out.json(200, fake_wire.models_body(self.wire, self.scenario.model))
            record.served = "models"
            return out.keep_alive
        return await self._refuse(out, record, 404, f"no route {path} on the {self.wire} wire")

    async def _refuse(self, out: Responder, record: RecordedRequest, status: int, why: str) -> bool:
        record.served = f"http {status}"
        await out.json(status, fake_wire.error_body(self.wire, status, why, self._request_id()))
        return out.keep_alive

    async def _complete(self, out: Responder, record: RecordedRequest, body: Any) -> bool:
        if not isinstance(body, dict):
            return await self._refuse(out, record, 400, "the body must be a JSON object")
        if body.get("stream") is not True:
            return await self._refuse(
                out, record, 400, "this fake server only streams: stream=true"
            )
        if self.wire == "openai":
            request = fake_wire.request_from_openai(body)
        else:
            request = fake_wire.request_from_anthropic(body)
        agent, scenario = self._agent_for(fake_wire.first_user_text(request))
        if scenario.overflows(request):
            # As the hosted APIs answer a prompt past the model's window (classified on the body).
            why = (
                f"This model's maximum context length is {scenario.context_window} tokens "
                "(context_length_exceeded)"
            )
            return await self._refuse(out, record, 400, why)
        index = scenario.turn_index(request)
        if self.wire == "anthropic":
            problem = thinking_problem(body, scenario, index)
            if problem is not None:
                return await self._refuse(out, record, 400, problem)
        turn = scenario.turn_for(request, index)
        record.agent, record.turn = agent, index
        failure = self._errors.next((agent, index), turn.errors)
        if failure is not None and failure.status is not None:
            record.served = f"http {failure.status}"
            message = fake_wire.status_message(failure.status)
            headers = {}
            if failure.retry_after_s is not None:
                headers["Retry-After"] = _seconds(failure.retry_after_s)
            error = fake_wire.error_body(self.wire, failure.status, message, self._request_id())
            await out.json(failure.status, error, headers)
            return out.keep_alive
        if turn.delay_ms:
            await asyncio.sleep(turn.delay_ms / 1000)
        usage = turn_usage(turn, request)
        if self.wire == "openai":
            options = body.get("stream_options")
            plan = fake_wire.openai_stream(
                turn,
                index,
                model=scenario.model,
                usage=usage,
                stream_id=f"chatcmpl-fake{next(self._ids)}",
                include_usage=isinstance(options, dict) and options.get("include_usage") is True,
            )
        else:
            plan = fake_wire.anthropic_stream(
                turn,
                index,
                model=scenario.model,
                usage=usage,
                stream_id=f"msg_fake{next(self._ids)}",
            )
        return await self._stream(out, record, plan, failure, turn.chunk_delay_ms / 1000)

    async def _stream(
        self,
        out: Responder,
        record: RecordedRequest,
        plan: fake_wire.StreamPlan,
        failure: ScriptedError | None,
        chunk_delay_s: float,
    ) -> bool:
        cut_after = failure.disconnect_after_chunks if failure is not None else None
        await out.start_stream()
        sent = 0
        for frame in plan.body:
            if frame.piece and cut_after is not None and sent >= cut_after:
                break
            await out.send(frame.data)
            if frame.piece:
                sent += 1
                if chunk_delay_s:
                    await asyncio.sleep(chunk_delay_s)
        if cut_after is not None:
            record.served = "disconnect"
            return False
        if failure is not None and failure.stream_error is not None:
            record.served = "stream_error"
            await out.send(fake_wire.stream_error_frame(self.wire, failure.stream_error))
        else:
            record.served = "answer"
            for frame in plan.tail:
                await out.send(frame.data)
        await out.end_stream()
        return out.keep_alive

    def _agent_for(self, goal: str) -> tuple[str, Scenario]:
        for key, scenario in self._agents:
            if key in goal:
                return key, scenario
        return "", self.scenario

    def _request_id(self) -> str:
        return f"req_fake{next(self._ids)}"


def _redacted(headers: dict[str, str]) -> dict[str, str]:
    return {k: "<redacted>" if k in _SECRET_HEADERS else v for k, v in headers.items()}


def _seconds(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def _flatten_agents(scenario: Scenario) -> list[tuple[str, Scenario]]:
    """Every `agents` entry at any depth, breadth first (the first whose key matches wins)."""
    found: list[tuple[str, Scenario]] = []
    queue = [scenario]
    while queue:
        current = queue.pop(0)
        for key, child in current.agents.items():
            found.append((key, child))
            queue.append(child)
    return found


def run_serve_fake(scenario_path: str, wire: str, host: str, port: int) -> int:
    """`ioh-tui serve-fake`: serve until SIGTERM or SIGINT, then exit 0.

    Prints exactly `listening on http://HOST:PORT` (flushed) once bound. A bad scenario, host, wire
    or a port that cannot be bound prints one line on stderr and returns 2.
    """
    try:
        server = FakeModelServer(scenario_path, wire=wire, host=host, port=port)
        return asyncio.run(_serve_until_signalled(server))
    except (ConfigError, OSError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        print(f"ioh-tui serve-fake: {reason}", file=sys.stderr, flush=True)
        return 2


async def _serve_until_signalled(server: FakeModelServer) -> int:
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    signals = (signal.SIGTERM, signal.SIGINT)
    for sig in signals:
        loop.add_signal_handler(sig, stop.set)
    try:
        async with server:
            print(f"listening on {server.url}", flush=True)
            await stop.wait()
    finally:
        for sig in signals:
            with contextlib.suppress(ValueError, RuntimeError):
                loop.remove_signal_handler(sig)
    return 0

"""The SDK's streams over a sandboxed server's pipes, and its streamable-HTTP and SSE clients.

The SDK's own `stdio_client` starts the server itself, outside any sandbox; this transport
bridges the pipes of a process `sandbox.service` started, with the SDK's message types doing the
framing (one JSON-RPC message a line, as the stdio transport defines it). Imports the SDK.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator, Mapping

import anyio
import httpx2
import mcp_types
from mcp.client._transport import TransportStreams
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.message import SessionMessage

from ioh_tui.core.errors import ConfigError
from ioh_tui.sandbox.service import Service


@contextlib.asynccontextmanager
async def service_streams(service: Service) -> AsyncIterator[TransportStreams]:
    """Read and write streams for the SDK's session, over `service`'s stdout and stdin."""
    incoming, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, outgoing = anyio.create_memory_object_stream[SessionMessage](0)

    async def read() -> None:
        async with incoming:
            with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                while line := await service.stdout.readline():
                    if not line.strip():
                        continue
                    try:
                        parsed: SessionMessage | Exception = SessionMessage(
                            mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False)
                        )
                    except ValueError as exc:
                        parsed = exc
                    await incoming.send(parsed)

    async def write() -> None:
        async with outgoing:
            with contextlib.suppress(OSError, anyio.ClosedResourceError, RuntimeError):
                async for message in outgoing:
                    data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    service.stdin.write(data.encode() + b"\n")
                    await service.stdin.drain()

    async with anyio.create_task_group() as group:
        group.start_soon(read)
        group.start_soon(write)
        try:
            yield read_stream, write_stream
        finally:
            group.cancel_scope.cancel()


def http_headers(headers_env: Mapping[str, str]) -> dict[str, str]:
    """Each header's value from the variable named for it (the value is never shown).

    Raises:
        ConfigError: a named variable is not set.
    """
    headers: dict[str, str] = {}
    for header, variable in headers_env.items():
        value = os.environ.get(variable)
        if not value:
            raise ConfigError(f"header {header}: the variable {variable} is not set")
        headers[header] = value
    return headers


READ_TIMEOUT_S: float | None = None
"""No read timeout: a call's answer may be minutes away (a long tool sends nothing meanwhile) and
an SSE stream may be quiet for hours. A read timeout closes the connection under a call that
runs longer than it (the SDK's default, 300 s, did); each call's own deadline bounds the wait
instead (`Connection.call`, the run's wall clock). Connecting and sending time out at 30 s."""


def _timeout() -> httpx2.Timeout:
    return httpx2.Timeout(30.0, read=READ_TIMEOUT_S)


@contextlib.asynccontextmanager
async def http_streams(url: str, headers: Mapping[str, str]) -> AsyncIterator[TransportStreams]:
    """The SDK's streamable-HTTP transport, sending `headers` with every request."""
    async with (
        httpx2.AsyncClient(headers=dict(headers), timeout=_timeout()) as http,
        streamable_http_client(url, http_client=http) as streams,
    ):
        yield streams


def _sse_client(
    headers: dict[str, str] | None = None,
    timeout: httpx2.Timeout | None = None,
    auth: httpx2.Auth | None = None,
) -> httpx2.AsyncClient:
    """The SSE transport's HTTP client, with our timeouts whatever the SDK asks for."""
    return httpx2.AsyncClient(headers=headers, timeout=_timeout(), auth=auth)


@contextlib.asynccontextmanager
async def sse_streams(url: str, headers: Mapping[str, str]) -> AsyncIterator[TransportStreams]:
    """The SDK's HTTP+SSE transport (the one before streamable HTTP), sending `headers`."""
    async with sse_client(url, headers=dict(headers), httpx_client_factory=_sse_client) as (
        read_stream,
        write_stream,
    ):
        yield read_stream, write_stream

"""One server's session: started, its tools and resources listed (again on a change), stopped.

The SDK's `Client` holds task groups that must be left by the task that entered them, so each
server lives in a task of its own (`_serve`) that enters the client, reports ready and waits to be
told to stop; calls are made from the run's tasks through the same client. Imports the SDK.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal

import mcp_types
from mcp import Client, MCPError
from mcp.client.session import IncomingMessage
from mcp.client.subscriptions import ListenNotSupportedError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from ioh_tui.core.errors import IohError
from ioh_tui.mcp.offers import (
    ResourceInfo,
    ToolInfo,
    list_resources,
    list_tools,
    tools_changed,
)
from ioh_tui.mcp.spec import ServerSpec
from ioh_tui.mcp.transport import http_headers, http_streams, service_streams, sse_streams
from ioh_tui.sandbox.base import Sandbox
from ioh_tui.sandbox.service import Service, start_service

State = Literal["starting", "ready", "failed", "exited", "stopped"]

LOG_LEVEL: Literal["info"] = "info"
"""The server's log messages asked for: info and above (live output of the calls in flight)."""

START_TIMEOUT_S = 30.0
"""How long a server may take to start and list its tools."""

_log = logging.getLogger(__name__)


Output = Callable[[str], None]
"""Takes a running call's live output: its progress and the server's log messages, as lines."""


class CallFailed(Exception):
    """The call did not complete: the server died, timed out or broke the protocol."""


class Connection:
    """A started (or failed) server and the tools it offers now."""

    def __init__(self, spec: ServerSpec, on_change: Callable[[], None] | None = None) -> None:
        self.spec = spec
        self.state: State = "starting"
        self.error: str | None = None
        self.tools: tuple[ToolInfo, ...] = ()
        self.resources: tuple[ResourceInfo, ...] = ()
        """Its resources, then its resource templates (none unless it declares resources)."""
        self.backend: str | None = None
        """The sandbox rung a local server runs under."""
        self.network = False
        self._on_change = on_change
        self._client: Client | None = None
        self._service: Service | None = None
        self._ready = asyncio.Event()
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._changes: list[str] = []
        """Changes to its tool list since a call last said them (`call`)."""
        self._outputs: list[Output] = []
        """The live output of the calls in flight (the server's log messages go to each)."""
        self._refreshing: asyncio.Task[None] | None = None
        """The re-listing a list-changed notification started, if any (kept: a task nothing
        refers to may be collected mid-run)."""

    @property
    def pid(self) -> int | None:
        """The process started for a local server (its sandbox's wrapper)."""
        return self._service.process.pid if self._service is not None else None

    async def start(
        self, sandbox: Sandbox, root: Path, *, network: bool, timeout_s: float = START_TIMEOUT_S
    ) -> None:
        """Start the server and list its tools; on failure `state` is `failed` and `error` why."""
        self.network = network and self.spec.kind == "stdio"
        self._task = asyncio.create_task(self._serve(sandbox, root), name=f"mcp {self.spec.name}")
        try:
            await asyncio.wait_for(self._ready.wait(), timeout_s)
        except TimeoutError:
            self._fail(f"did not start within {timeout_s:.0f} s")
            await self.stop()

    async def _serve(self, sandbox: Sandbox, root: Path) -> None:
        try:
            async with contextlib.AsyncExitStack() as stack:
                transport = await self._transport(stack, sandbox, root)
                client = Client(
                    transport,
                    cache=None,
                    message_handler=self._on_message,
                    logging_callback=self._on_log,
                    log_level=LOG_LEVEL,
                    read_timeout_seconds=START_TIMEOUT_S,
                )
                self._client = await stack.enter_async_context(client)
                await self._ask_for_logs(self._client)
                await self.refresh()
                if self._client.protocol_version in MODERN_PROTOCOL_VERSIONS:
                    subscribed = asyncio.Event()
                    listening = asyncio.create_task(self._listen(self._client, subscribed))
                    stack.callback(listening.cancel)
                    # Ready once the server can tell of a change: a change the first call made
                    # before the stream was open would never be heard of (a loaded CI lost one).
                    await subscribed.wait()
                self.state = "ready"
                self._ready.set()
                await self._stop.wait()
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # the server's failure is reported, never raised
            self._fail(_why(exc, self._service))
        finally:
            self._client = None
            if self.state in ("starting", "ready"):
                self.state = "stopped"
            self._ready.set()

    async def _transport(
        self, stack: contextlib.AsyncExitStack, sandbox: Sandbox, root: Path
    ) -> Any:
        spec = self.spec
        if spec.command is None:
            headers = http_headers(spec.headers_env) | dict(spec.headers)
            streams = sse_streams if spec.transport == "sse" else http_streams
            return streams(str(spec.url), headers)
        cwd = (root / spec.cwd) if spec.cwd else root
        service = await start_service(
            sandbox, spec.argv, cwd, network=self.network, env=dict(spec.env)
        )
        self._service, self.backend = service, service.backend
        stack.push_async_callback(service.stop)
        return service_streams(service)

    async def refresh(self) -> None:
        """List the server's tools and resources again (every page)."""
        client = self._client
        if client is None:
            return
        listed = await list_tools(client)
        # Compared with the list as it is now, not as it was when this listing began: two
        # re-listings may overlap (a notice and the listen stream), and the second is no change.
        before, self.tools = self.tools, listed
        if self.state == "ready" and (change := tools_changed(before, self.tools)):
            self._changes.append(change)
        self.resources = await list_resources(client, self.spec.name)
        if self._on_change is not None:
            self._on_change()

    async def _on_message(self, message: IncomingMessage) -> None:
        """A handshake-era server announces a changed list as a notification."""
        changed = (mcp_types.ToolListChangedNotification, mcp_types.ResourceListChangedNotification)
        if isinstance(message, changed):
            self._refreshing = asyncio.get_running_loop().create_task(self._refresh_quietly())

    async def _listen(self, client: Client, subscribed: asyncio.Event) -> None:
        """A 2026-07-28 server announces it through a `subscriptions/listen` stream."""
        try:
            with contextlib.suppress(ListenNotSupportedError, MCPError, RuntimeError, TimeoutError):
                async with client.listen(
                    tools_list_changed=True, resources_list_changed=True
                ) as events:
                    subscribed.set()
                    async for _ in events:
                        # Started at once, so a call whose answer came after the notice waits
                        # for it (`call`).
                        self._refreshing = asyncio.create_task(self._refresh_quietly())
                        await self._refreshing
        finally:
            subscribed.set()

    async def _refresh_quietly(self) -> None:
        try:
            await self.refresh()
        except Exception as exc:  # a failed re-list keeps the tools listed before
            _log.warning("mcp server %s: re-listing its tools failed: %s", self.spec.name, exc)

    async def _ask_for_logs(self, client: Client) -> None:
        """Ask a handshake-era server for its log messages (a 2026-07-28 one: every request)."""
        capabilities = client.server_capabilities
        if client.protocol_version in MODERN_PROTOCOL_VERSIONS or capabilities is None:
            return
        if capabilities.logging is not None:
            with contextlib.suppress(MCPError):
                await client.set_logging_level(LOG_LEVEL)

    async def _on_log(self, params: mcp_types.LoggingMessageNotificationParams) -> None:
        """A log message of the server: live output of the calls in flight (else only logged)."""
        data = params.data if isinstance(params.data, str) else json.dumps(params.data)
        source = f" {params.logger}" if params.logger else ""
        line = f"[{params.level}{source}] {data}\n"
        for output in self._outputs:
            output(line)
        if not self._outputs:
            _log.debug("mcp server %s: %s", self.spec.name, line.rstrip())

    async def call(
        self,
        tool: str,
        arguments: Mapping[str, Any],
        timeout_s: float,
        on_output: Output | None = None,
    ) -> mcp_types.CallToolResult:
        """Call `tool`; a tool's own failure is a result with `is_error`.

        `on_output` takes the call's progress and the server's log messages while it runs.

        Raises:
            CallFailed: the server is not running, died, or did not answer in time.
        """
        client = self._client
        if client is None or self.state != "ready":
            raise CallFailed(f"server {self.spec.name} is not running ({self.describe_state()})")

        async def report(progress: float, total: float | None, message: str | None) -> None:
            if on_output is not None:
                of = f"/{total:g}" if total is not None else ""
                on_output(f"[progress {progress:g}{of}]{f' {message}' if message else ''}\n")

        if on_output is not None:
            self._outputs.append(on_output)
        try:
            result = await asyncio.wait_for(
                client.call_tool(
                    tool,
                    dict(arguments),
                    read_timeout_seconds=timeout_s,
                    progress_callback=report,
                ),
                timeout_s + 1.0,
            )
        except TimeoutError:
            raise CallFailed(f"no answer within {timeout_s:.0f} s") from None
        except (MCPError, OSError, ValueError) as exc:
            raise await self._failure(exc) from None
        finally:
            if on_output is not None:
                self._outputs.remove(on_output)
        # A notice sent before the answer wakes its handler before this task: one turn of the
        # loop lets it start the re-listing.
        await asyncio.sleep(0)
        refreshing = self._refreshing
        if refreshing is not None and not refreshing.done():
            # A call that changed the tool list (its server said so before answering) returns
            # with the new list in place, so the next request offers it; without this wait the
            # next step could be asked before the re-listing finished (a race a fast step lost).
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(refreshing), timeout_s)
        if self._changes:
            # Said with the result, so the model and the trace know the tools it is offered
            # from now on are not the ones it was offered before (a child elsewhere too).
            said = "; ".join(self._changes)
            self._changes.clear()
            note = f"[ioh-tui: MCP server {self.spec.name} changed its tools: {said}]"
            content = [*result.content, mcp_types.TextContent(type="text", text=note)]
            result = result.model_copy(update={"content": content})
        return result

    async def read(self, uri: str, timeout_s: float) -> mcp_types.ReadResourceResult:
        """Read the resource at `uri`.

        Raises:
            CallFailed: the server is not running, died, refused the read or did not answer.
        """
        client = self._client
        if client is None or self.state != "ready":
            raise CallFailed(f"server {self.spec.name} is not running ({self.describe_state()})")
        # Sent on the session, not through `Client.read_resource`, which takes no deadline: the
        # client's default (START_TIMEOUT_S) would cut a read the run had time for.
        request = mcp_types.ReadResourceRequest(params=mcp_types.ReadResourceRequestParams(uri=uri))
        try:
            return await asyncio.wait_for(
                client.session.send_request(
                    request, mcp_types.ReadResourceResult, request_read_timeout_seconds=timeout_s
                ),
                timeout_s + 1.0,
            )
        except TimeoutError:
            raise CallFailed(f"no answer within {timeout_s:.0f} s") from None
        except (MCPError, OSError, ValueError) as exc:
            raise await self._failure(exc) from None

    async def _failure(self, exc: BaseException) -> CallFailed:
        """Why a request failed: the server's exit (then it is `exited`), or the error.

        An error the server answered with is its own; a broken connection may be its exit.
        """
        service = self._service
        answered = isinstance(exc, MCPError) and exc.code != mcp_types.CONNECTION_CLOSED
        if service is not None and not answered:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(service.process.wait(), 1.0)
            if service.returncode is not None:
                self.state = "exited"
                self.error = _why(exc, service)
                return CallFailed(f"the server exited: {self.error}")
        return CallFailed(_brief(exc))

    def describe_state(self) -> str:
        """The state, with the error when there is one."""
        return f"{self.state}: {self.error}" if self.error else self.state

    def _fail(self, why: str) -> None:
        if self.state in ("starting", "ready"):
            self.state = "failed"
            self.error = why
        self._ready.set()

    async def stop(self) -> None:
        """End the session and the server's process tree."""
        self._stop.set()
        task = self._task
        if task is None:
            return
        try:
            await asyncio.wait_for(asyncio.shield(task), 10.0)
        except TimeoutError:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        finally:
            if self._service is not None and self._service.returncode is None:
                await asyncio.to_thread(self._service.kill_now)
        if self.state == "ready":
            self.state = "stopped"


def _why(exc: BaseException, service: Service | None) -> str:
    """One line: what went wrong, and what a local server said last on stderr."""
    text = _brief(exc)
    if service is not None:
        code = service.returncode
        if code is not None:
            text = f"exit status {code}" if text in ("", "Connection closed") else text
        tail = service.stderr_tail().strip().splitlines()
        if tail:
            text = f"{text} ({tail[-1][:200]})"
    return text


def _brief(exc: BaseException) -> str:
    """The innermost message of an exception group, or the exception's own."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, IohError | MCPError):
        return str(exc)
    message = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__

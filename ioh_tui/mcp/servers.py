"""The run's MCP servers: started together with the run, their tools offered, stopped with it.

Plain Python at import: the SDK is imported only when there is a server to start, so a base
install without the `mcp` extra never loads it (each server then fails with `INSTALL_HINT`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ioh_tui.mcp.spec import INSTALL_HINT, ServerSpec, sdk_available
from ioh_tui.sandbox.base import Sandbox
from ioh_tui.tools.base import Tool

if TYPE_CHECKING:
    import mcp_types

    from ioh_tui.mcp.connection import Connection
    from ioh_tui.mcp.offers import ResourceInfo, ToolInfo

NetworkFor = Callable[[ServerSpec], bool]
"""Whether a local server gets the network (a `net` rule allows its command line)."""


@dataclass(frozen=True, slots=True)
class ServerRow:
    """What is known of one server: its state, why it failed, its tools."""

    name: str
    kind: str
    line: str
    """The command line or the URL (never a header value)."""
    state: str
    error: str | None
    tools: tuple[str, ...]
    backend: str | None = None
    network: bool = False
    resources: tuple[dict[str, Any], ...] = ()
    """Its resources, then its templates: uri, name, description, mime_type, template."""


class McpServers:
    """The servers of one run; `tools()` is what they offer now (refreshed on list-changed).

    Each server's tools, and the two resource tools while any server lists resources.
    """

    def __init__(self, specs: Sequence[ServerSpec]) -> None:
        self.specs = tuple(specs)
        self._connections: list[Connection] = []
        self._tools: tuple[Tool, ...] = ()
        self._missing = not sdk_available() if self.specs else False

    async def start(self, sandbox: Sandbox, root: Path, network_for: NetworkFor) -> None:
        """Start every server at once; a server that fails is reported in `rows()`."""
        if not self.specs or self._missing:
            return
        from ioh_tui.mcp.connection import Connection

        self._connections = [Connection(spec, self._rebuild) for spec in self.specs]
        await asyncio.gather(
            *(c.start(sandbox, root, network=network_for(c.spec)) for c in self._connections)
        )
        self._rebuild()

    def _rebuild(self) -> None:
        from ioh_tui.mcp.resources import resource_tools
        from ioh_tui.mcp.tools import mcp_tool

        tools: list[Tool] = []
        for connection in self._connections:
            if connection.state != "ready":
                continue
            for info in connection.tools:
                tool = mcp_tool(connection, info)
                if tool is not None:
                    tools.append(tool)
        if self.resources():
            tools.extend(resource_tools(self.resources, self.read))
        self._tools = tuple(tools)

    def resources(self) -> tuple[ResourceInfo, ...]:
        """The resources and templates the running servers list now."""
        return tuple(r for c in self._connections if c.state == "ready" for r in c.resources)

    async def read(self, server: str, uri: str, timeout_s: float) -> mcp_types.ReadResourceResult:
        """Read `server`'s resource at `uri` (for the run's tools and a child elsewhere).

        Raises:
            CallFailed: no such server is running, or the read failed.
        """
        return await self._running(server).read(uri, timeout_s)

    def _running(self, server: str) -> Connection:
        from ioh_tui.mcp.connection import CallFailed

        for connection in self._connections:
            if connection.spec.name == server and connection.state == "ready":
                return connection
        raise CallFailed(f"the MCP server {server} is not running")

    def offered(self) -> tuple[tuple[str, ToolInfo], ...]:
        """(server, tool) of every tool the running servers list now, for a child elsewhere."""
        return tuple(
            (c.spec.name, info) for c in self._connections if c.state == "ready" for info in c.tools
        )

    async def call(
        self, server: str, tool: str, arguments: Mapping[str, Any], timeout_s: float
    ) -> mcp_types.CallToolResult:
        """Call `server`'s `tool` for a child elsewhere (`offered_tool`'s caller, at the root).

        Raises:
            CallFailed: no such server is running.
        """
        return await self._running(server).call(tool, arguments, timeout_s)

    def tools(self) -> tuple[Tool, ...]:
        """The tools the running servers offer now."""
        return self._tools

    def rows(self) -> list[ServerRow]:
        """One row per configured server."""
        if self._missing or not self._connections:
            state, error = ("failed", INSTALL_HINT) if self._missing else ("configured", None)
            return [ServerRow(s.name, s.kind, s.line, state, error, ()) for s in self.specs]
        return [
            ServerRow(
                c.spec.name,
                c.spec.kind,
                c.spec.line,
                c.state,
                c.error,
                tuple(t.name for t in c.tools),
                c.backend,
                c.network,
                tuple(r.described() for r in c.resources),
            )
            for c in self._connections
        ]

    async def stop(self) -> None:
        """Stop every server and its process tree."""
        await asyncio.gather(*(c.stop() for c in self._connections), return_exceptions=True)
        self._tools = ()

"""The root's MCP servers, reached from a child on a Ray node.

A server runs once, in the root's process (its connection cannot travel): a child is sent the
list of its tools and resources when its drive starts (`offered`, `offered_resources`) and
offers them as its own (`RootServers`). Its loop decides each call and read as for a local
child, through its policy and the root's approver; only the call or the read itself goes to the
root (`call_root_server`, `read_root_resource`), made by the server's connection.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from ioh_tui.engine.state import Deps
from ioh_tui.mcp.servers import McpServers
from ioh_tui.tools.base import Tool

if TYPE_CHECKING:
    from ioh_tui.mcp.offers import ResourceInfo, ToolInfo
    from ioh_tui.mcp.tools import Caller

Send = Callable[..., Awaitable[Any]]
"""A request to the root (`Link.call`): the op, then its arguments."""


def _servers(p: Deps) -> list[McpServers]:
    """The root's MCP servers, as attached to the tools it shares with its children."""
    return [source for source in p.tools.sources if isinstance(source, McpServers)]


def offered(p: Deps) -> tuple[tuple[str, ToolInfo], ...]:
    """(server, tool) of every tool the root's running servers list now."""
    return tuple(tool for servers in _servers(p) for tool in servers.offered())


def offered_resources(p: Deps) -> tuple[ResourceInfo, ...]:
    """The resources and templates the root's running servers list now."""
    return tuple(r for servers in _servers(p) for r in servers.resources())


async def read_root_resource(p: Deps, server: str, uri: str, timeout_s: float) -> Any:
    """A remote child's resource read, made at the root by the server's own connection.

    Raises:
        CallFailed: no such server is running, or the read failed.
    """
    return await _serving(p, server).read(server, uri, timeout_s)


def _serving(p: Deps, server: str) -> McpServers:
    for servers in _servers(p):
        if any(spec.name == server for spec in servers.specs):
            return servers
    from ioh_tui.mcp.connection import CallFailed

    raise CallFailed(f"the MCP server {server} is not configured")


async def call_root_server(
    p: Deps, server: str, tool: str, arguments: Mapping[str, Any], timeout_s: float
) -> Any:
    """A remote child's MCP call, made at the root by the server's own connection.

    Raises:
        CallFailed: no such server is running.
    """
    return await _serving(p, server).call(server, tool, arguments, timeout_s)


class RootServers:
    """The root's MCP tools on a child's node (a `ToolSource`): each call goes to the root."""

    def __init__(
        self,
        offered: tuple[tuple[str, ToolInfo], ...],
        send: Send,
        resources: tuple[ResourceInfo, ...] = (),
    ) -> None:
        from ioh_tui.mcp.resources import resource_tools
        from ioh_tui.mcp.tools import offered_tool

        def caller(server: str) -> Caller:
            async def call(
                tool: str, arguments: Mapping[str, Any], timeout_s: float, _output: Any
            ) -> Any:
                # The call is made at the root: its live output stays there (not sent back).
                return await send("mcp", server, tool, dict(arguments), timeout_s)

            return call

        async def read(server: str, uri: str, timeout_s: float) -> Any:
            return await send("mcp_read", server, uri, timeout_s)

        made = (offered_tool(server, info, caller(server)) for server, info in offered)
        self._tools = tuple(tool for tool in made if tool is not None)
        if resources:
            self._tools += resource_tools(lambda: resources, read)

    def tools(self) -> tuple[Tool, ...]:
        """The tools (and resources) as the root's servers listed them when this drive started."""
        return self._tools

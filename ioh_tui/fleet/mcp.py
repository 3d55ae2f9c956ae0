"""The root's MCP servers, reached from a child on a Ray node.

A server runs once, in the root's process (its connection cannot travel): a child is sent the
list of its tools when its drive starts (`offered`) and offers them as its own (`RootServers`).
Its loop decides each call as for a local child, through its policy and the root's approver;
only the call itself goes to the root (`call_root_server`), made by the server's connection.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from ioh_tui.engine.state import Deps
from ioh_tui.mcp.servers import McpServers
from ioh_tui.tools.base import Tool

if TYPE_CHECKING:
    from ioh_tui.mcp.connection import ToolInfo
    from ioh_tui.mcp.tools import Caller

Send = Callable[..., Awaitable[Any]]
"""A request to the root (`Link.call`): the op, then its arguments."""


def _servers(p: Deps) -> list[McpServers]:
    """The root's MCP servers, as attached to the tools it shares with its children."""
    return [source for source in p.tools.sources if isinstance(source, McpServers)]


def offered(p: Deps) -> tuple[tuple[str, ToolInfo], ...]:
    """(server, tool) of every tool the root's running servers list now."""
    return tuple(tool for servers in _servers(p) for tool in servers.offered())


async def call_root_server(
    p: Deps, server: str, tool: str, arguments: Mapping[str, Any], timeout_s: float
) -> Any:
    """A remote child's MCP call, made at the root by the server's own connection.

    Raises:
        CallFailed: no such server is running.
    """
    for servers in _servers(p):
        if any(spec.name == server for spec in servers.specs):
            return await servers.call(server, tool, arguments, timeout_s)
    from ioh_tui.mcp.connection import CallFailed

    raise CallFailed(f"the MCP server {server} is not configured")


class RootServers:
    """The root's MCP tools on a child's node (a `ToolSource`): each call goes to the root."""

    def __init__(self, offered: tuple[tuple[str, ToolInfo], ...], send: Send) -> None:
        from ioh_tui.mcp.tools import offered_tool

        def caller(server: str) -> Caller:
            async def call(tool: str, arguments: Mapping[str, Any], timeout_s: float) -> Any:
                return await send("mcp", server, tool, dict(arguments), timeout_s)

            return call

        made = (offered_tool(server, info, caller(server)) for server, info in offered)
        self._tools = tuple(tool for tool in made if tool is not None)

    def tools(self) -> tuple[Tool, ...]:
        """The tools as the root's servers listed them when this drive started."""
        return self._tools

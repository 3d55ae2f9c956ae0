"""`ioh-tui mcp list` and the start screen: start each server, list its tools, stop it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

from ioh_tui.mcp.servers import McpServers, NetworkFor, ServerRow
from ioh_tui.mcp.spec import ServerSpec
from ioh_tui.sandbox.base import Sandbox

Lister = Callable[[], Awaitable[list[ServerRow]]]
"""Starts the configured servers, lists them and stops them (the start screen's panel)."""


async def list_servers(
    specs: Sequence[ServerSpec], sandbox: Sandbox, root: Path, network_for: NetworkFor
) -> list[ServerRow]:
    """Each server's row as it started (its tools, or why it failed); none is left running."""
    servers = McpServers(specs)
    try:
        await servers.start(sandbox, root, network_for)
        return servers.rows()
    finally:
        await servers.stop()

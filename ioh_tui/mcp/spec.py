"""A configured server (`[mcp.servers.NAME]`) as the client starts it, and the names it gives.

Plain Python: nothing here imports the SDK, so a base install can read and show the servers.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

PREFIX = "mcp__"
"""Every MCP tool's model-facing name starts so: `mcp__SERVER__TOOL`."""

_TOOL_CHARS = re.compile(r"[^A-Za-z0-9_-]")
MAX_TOOL_NAME = 64
"""The longest tool name the providers accept."""

INSTALL_HINT = "MCP servers need the mcp extra: pip install 'ioh-tui[mcp]'"


@dataclass(frozen=True, slots=True)
class ServerSpec:
    """One server: a local command (stdio, run in the sandbox) or a URL (HTTP, or HTTP+SSE)."""

    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    """Relative to the workspace (default: the workspace)."""
    url: str | None = None
    headers_env: Mapping[str, str] = field(default_factory=dict)
    """Header name to the environment variable holding its value (never the value)."""
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)
    """Header values given as they are (an ACP client's server): held in memory only, never
    written to the store or shown."""
    transport: Literal["http", "sse"] = "http"
    """How a URL is spoken to: streamable HTTP, or the older HTTP+SSE transport."""

    @property
    def kind(self) -> Literal["stdio", "http", "sse"]:
        """`stdio` for a command; for a URL its transport, `http` or `sse`."""
        return "stdio" if self.command is not None else self.transport

    @property
    def argv(self) -> list[str]:
        """The command and its arguments (stdio servers)."""
        return [self.command, *self.args] if self.command is not None else []

    @property
    def line(self) -> str:
        """What starts it, as shown: the command line, or the URL."""
        return shlex.join(self.argv) if self.command is not None else str(self.url)


def server_specs(servers: Mapping[str, Mapping[str, Any]]) -> tuple[ServerSpec, ...]:
    """The servers of `Config.mcp_servers()` (already checked: `config/shapes.py`), by name."""
    specs: list[ServerSpec] = []
    for name, table in sorted(servers.items()):
        specs.append(
            ServerSpec(
                name=name,
                command=table.get("command"),
                args=tuple(table.get("args", ())),
                env=dict(table.get("env", {})),
                cwd=table.get("cwd"),
                url=table.get("url"),
                headers_env=dict(table.get("headers_env", {})),
                transport=table.get("transport", "http"),
            )
        )
    return tuple(specs)


def tool_name(server: str, tool: str) -> str | None:
    """The model-facing name of `tool` on `server`, or None when no provider would accept it."""
    exposed = f"{PREFIX}{server}__{_TOOL_CHARS.sub('_', tool)}"
    return exposed if len(exposed) <= MAX_TOOL_NAME else None


def sdk_available() -> bool:
    """Whether the `mcp` extra (the official SDK) is installed."""
    import importlib.util

    return importlib.util.find_spec("mcp") is not None

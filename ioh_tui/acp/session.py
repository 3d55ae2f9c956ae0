"""An ACP session's state, and what a request names: MCP servers, a prompt's goal, a run.

Kept apart from `agent.py`, whose protocol methods share one table of these sessions.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from acp import RequestError
from acp.schema import (
    AcpMcpServer,
    AudioContentBlock,
    EmbeddedResourceContentBlock,
    HttpMcpServer,
    ImageContentBlock,
    McpServerStdio,
    ResourceContentBlock,
    SseMcpServer,
    TextContentBlock,
)

from ioh_tui.acp.outbox import Outbox
from ioh_tui.engine import CancelToken
from ioh_tui.mcp import ServerSpec
from ioh_tui.policy import Layer, Policy, Rule

log = logging.getLogger(__name__)

INVALID_PARAMS = -32602
"""JSON-RPC's code for a request whose parameters cannot be used (a bad cwd, a bad flag)."""

PromptBlock = (
    TextContentBlock
    | ImageContentBlock
    | AudioContentBlock
    | ResourceContentBlock
    | EmbeddedResourceContentBlock
)
AnyMcpServer = HttpMcpServer | SseMcpServer | AcpMcpServer | McpServerStdio

SESSION_LAYER = "acp-session:remembered"
"""The policy layer of a session's remembered rules (a remembered layer: `is_remembered`)."""


@dataclass
class Session:
    """One ACP session: a workspace and the runs its prompts started."""

    id: str
    cwd: Path
    mcp: tuple[ServerSpec, ...]
    outbox: Outbox
    runs: list[int] = field(default_factory=list)
    cancel: CancelToken | None = None
    """The token of the run under way (None between prompts)."""
    remembered: list[Rule] = field(default_factory=list)
    """Rules the client said to remember (`allow_always`): every later run of the session
    starts with them, as a run keeps its own for the rest of it."""
    effort: str | None = None
    """The reasoning effort the client chose for the session's runs (None: as configured)."""

    def policy(self, configured: Policy | None) -> Policy | None:
        """`configured` with the session's remembered rules on top (they never beat a deny).

        None (a resumed run keeps its stored policy, with its own remembered rules) stays None.
        """
        if not self.remembered or configured is None:
            return configured
        return configured.with_layer(Layer(SESSION_LAYER, tuple(self.remembered)))


def refused(message: str) -> RequestError:
    """An `invalid params` error saying `message` (a bad cwd, flag, server or session)."""
    return RequestError(INVALID_PARAMS, message)


def client_servers(servers: Sequence[AnyMcpServer] | None) -> tuple[ServerSpec, ...]:
    """The client's stdio, HTTP and SSE MCP servers as ours (ACP-transport ones: logged).

    An HTTP server is reached over streamable HTTP, an SSE one over HTTP+SSE, with the client's
    headers, held in memory only.

    Raises:
        RequestError: A server's command is not an absolute path (ACP requires one), or an HTTP
            or SSE server's URL is not http(s).
    """
    specs: list[ServerSpec] = []
    for server in servers or ():
        if isinstance(server, HttpMcpServer | SseMcpServer):
            if urlsplit(server.url).scheme not in ("http", "https"):
                raise refused(f"MCP server {server.name}: url must be http or https")
            headers = {header.name: header.value for header in server.headers}
            sse = isinstance(server, SseMcpServer)
            specs.append(
                ServerSpec(
                    server.name, url=server.url, headers=headers, transport="sse" if sse else "http"
                )
            )
            continue
        if not isinstance(server, McpServerStdio):
            log.warning(
                "MCP server %s left out: only stdio, HTTP and SSE servers are taken", server.name
            )
            continue
        if not Path(server.command).is_absolute():
            raise refused(f"MCP server {server.name}: command must be an absolute path")
        env = {variable.name: variable.value for variable in server.env}
        specs.append(ServerSpec(server.name, server.command, tuple(server.args), env))
    return tuple(specs)


def goal_text(blocks: Sequence[PromptBlock]) -> str:
    """The run's goal: the prompt's text, and each linked or embedded resource named by URI."""
    parts: list[str] = []
    for block in blocks:
        if isinstance(block, TextContentBlock):
            parts.append(block.text)
        elif isinstance(block, ResourceContentBlock):
            parts.append(f"[{block.name}]({block.uri})")
        elif isinstance(block, EmbeddedResourceContentBlock):
            parts.append(f"[resource]({block.resource.uri})")
    return "\n".join(part for part in parts if part).strip()


def run_id_of(session_id: str) -> int | None:
    """The stored run a session id names (`42` or `run-42`), or None."""
    text = session_id.removeprefix("run-")
    return int(text) if text.isdigit() else None

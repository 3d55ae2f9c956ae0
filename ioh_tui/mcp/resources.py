"""The servers' resources as two tools: `mcp_resources` lists them, `mcp_read_resource` reads one.

Offered while a running server lists resources or templates. The listing is what the servers
listed (at start, again when one says its list changed): no request is made and nothing is
decided. A read is the act `mcp` on `SERVER/URI`, decided like a tool call (a URI must have a
scheme, so it never reads as a tool's name: `SERVER/*` still covers the whole server). What
comes back is rendered as a tool result's resources are: text inlined under its URI, an image
shown to a model that takes images, other bytes described.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import mcp_types

from ioh_tui.mcp.connection import CallFailed
from ioh_tui.mcp.offers import ResourceInfo
from ioh_tui.mcp.tools import decided
from ioh_tui.tools.base import Tool, ToolContext, ToolResult, arg_str, cap
from ioh_tui.tools.specs import STRING, spec

_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")
"""A URI's scheme (RFC 3986), which every read's URI must start with."""

LIST_TOOL = "mcp_resources"
READ_TOOL = "mcp_read_resource"

Reader = Callable[[str, str, float], Awaitable[mcp_types.ReadResourceResult]]
"""Reads one resource: (server, URI, timeout in seconds) to what the server sent."""
Listing = Callable[[], tuple[ResourceInfo, ...]]
"""The resources and templates the running servers list now."""


def resource_tools(listing: Listing, reader: Reader) -> tuple[Tool, Tool]:
    """The listing tool and the reading tool over `listing`, reading through `reader`."""

    async def list_run(args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        return list_resources(listing(), arg_str(args, "server", required=False), ctx)

    async def read_run(args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        server, uri = arg_str(args, "server"), arg_str(args, "uri")
        return await read_resource(listing(), reader, server, uri, ctx)

    listed = spec(
        LIST_TOOL,
        "List the resources (data a server offers to read) and resource templates (URIs to "
        f"fill in) of the MCP servers. Read one with {READ_TOOL}.",
        {"server": STRING | {"description": "only this server's (default: every server's)"}},
        [],
    )
    read = spec(
        READ_TOOL,
        f"Read an MCP server's resource by its URI (as {LIST_TOOL} lists it, or a template's "
        "URI filled in).",
        {"server": STRING, "uri": STRING},
        ["server", "uri"],
    )
    return Tool(listed, list_run), Tool(read, read_run)


def list_resources(found: tuple[ResourceInfo, ...], server: str, ctx: ToolContext) -> ToolResult:
    """One line per resource, then per template, server by server."""
    servers = sorted({r.server for r in found})
    if server and server not in servers:
        return _unknown(LIST_TOOL, server, servers)
    chosen = [r for r in found if not server or r.server == server]
    lines: list[str] = []
    for name in [server] if server else servers:
        mine = [r for r in chosen if r.server == name]
        fixed = [r for r in mine if not r.template]
        templates = [r for r in mine if r.template]
        lines.append(
            f"server {name}: {_count(len(fixed), 'resource')}, {_count(len(templates), 'template')}"
        )
        lines.extend(_line(r) for r in fixed + templates)
    return ToolResult(cap("\n".join(lines), ctx.entry_cap))


def _line(resource: ResourceInfo) -> str:
    mime = f" ({resource.mime_type})" if resource.mime_type else ""
    about = f": {' '.join(resource.description.split())}" if resource.description else ""
    kind = "template " if resource.template else ""
    return f"  {kind}{resource.uri}  {resource.name}{mime}{about}"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _unknown(tool: str, server: str, servers: list[str]) -> ToolResult:
    offering = ", ".join(servers) if servers else "none"
    return ToolResult(
        f"[{tool} error] no running MCP server {server!r} offers resources "
        f"(servers that do: {offering})",
        ok=False,
    )


async def read_resource(
    found: tuple[ResourceInfo, ...], reader: Reader, server: str, uri: str, ctx: ToolContext
) -> ToolResult:
    """Decide the read (`mcp` on `SERVER/URI`), then make it and render what came back."""
    servers = sorted({r.server for r in found})
    if server not in servers:
        return _unknown(READ_TOOL, server, servers)
    if not _SCHEME.match(uri):
        # Without a scheme, `SERVER/URI` could read as a tool's target and pass a tool's rule.
        return ToolResult(
            f"[{READ_TOOL} error] {uri!r} is not a URI: it has no scheme (as in memo://note)",
            ok=False,
        )
    target = f"{server}/{uri}"
    known = next((r for r in found if r.server == server and r.uri == uri), None)
    preview = (
        f"resource {known.name}{': ' + known.description if known.description else ''}"
        if known
        else None
    )
    prefix = f"{server}/"

    def same_server(rewritten: str) -> bool:
        return rewritten.startswith(prefix) and bool(_SCHEME.match(rewritten[len(prefix) :]))

    why = f"a read can be rewritten only to another URI of {server} ({prefix}SCHEME:...)"
    answer = await decided(ctx, READ_TOOL, target, None, preview, why, same_server)
    if isinstance(answer, ToolResult):
        return answer
    # The person asked may point the read at another of the server's URIs.
    target, uri = answer.target, answer.target[len(prefix) :]
    wall = ctx.wall_s()
    if wall <= 0:
        return ToolResult(f"[{READ_TOOL} not run] the run's time budget is spent", ok=False)
    try:
        result = await reader(server, uri, wall)
    except CallFailed as exc:
        return ToolResult(f"[{READ_TOOL} error] {target}: {exc}", ok=False)
    from ioh_tui.mcp.render import render_contents

    rendered, images = render_contents(result, target, ctx.vision, ctx.model or "")
    note = f"\n{answer.note}" if answer.note else ""
    text = cap(rendered, ctx.entry_cap)
    return ToolResult(f"{text}{note}", meta={"server": server}, images=images)

"""What a server offers, as it lists it: its tools, its resources and resource templates.

Every page of each list is read (up to `MAX_LIST_PAGES`). Imports the SDK.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from mcp import Client, MCPError

_log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ToolInfo:
    """A tool as the server lists it."""

    name: str
    description: str
    input_schema: dict[str, Any]
    hints: dict[str, Any] = field(default_factory=dict)
    """The server's annotations (`readOnlyHint` and the like): shown, never trusted."""


@dataclass(frozen=True, slots=True)
class ResourceInfo:
    """A resource, or a resource template, as the server lists it."""

    server: str
    uri: str
    """The resource's URI, or a template's RFC 6570 URI template."""
    name: str
    description: str = ""
    mime_type: str | None = None
    template: bool = False

    def described(self) -> dict[str, Any]:
        """As `mcp list --json` gives it (without the server, the row's own)."""
        return {
            "uri": self.uri,
            "name": self.name,
            "description": self.description,
            "mime_type": self.mime_type,
            "template": self.template,
        }


MAX_LIST_PAGES = 100
"""Pages read of one list: a server that pages on for ever is cut here."""


async def list_tools(client: Client) -> tuple[ToolInfo, ...]:
    """The server's tools."""
    found: list[ToolInfo] = []
    cursor: str | None = None
    for _ in range(MAX_LIST_PAGES):
        page = await client.list_tools(cursor=cursor)
        for tool in page.tools:
            hints = (
                tool.annotations.model_dump(by_alias=True, exclude_none=True)
                if tool.annotations
                else {}
            )
            found.append(
                ToolInfo(tool.name, tool.description or "", dict(tool.input_schema), hints)
            )
        cursor = page.next_cursor
        if cursor is None:
            break
    return tuple(found)


async def list_resources(client: Client, server: str) -> tuple[ResourceInfo, ...]:
    """Its resources, then its templates, when it declares resources.

    A listing that fails keeps what was listed before the failure (its tools still serve).
    """
    capabilities = client.server_capabilities
    if capabilities is None or capabilities.resources is None:
        return ()
    found: list[ResourceInfo] = []
    try:
        cursor: str | None = None
        for _ in range(MAX_LIST_PAGES):
            page = await client.list_resources(cursor=cursor)
            found.extend(
                ResourceInfo(server, r.uri, r.name, r.description or "", r.mime_type)
                for r in page.resources
            )
            if (cursor := page.next_cursor) is None:
                break
        cursor = None
        for _ in range(MAX_LIST_PAGES):
            listed = await client.list_resource_templates(cursor=cursor)
            found.extend(
                ResourceInfo(server, t.uri_template, t.name, t.description or "", t.mime_type, True)
                for t in listed.resource_templates
            )
            if (cursor := listed.next_cursor) is None:
                break
    except (MCPError, ValueError) as exc:
        _log.warning("mcp server %s: listing its resources failed: %s", server, exc)
    return tuple(found)


def tools_changed(before: tuple[ToolInfo, ...], after: tuple[ToolInfo, ...]) -> str | None:
    """What changed in a tool list, in words (None: nothing).

    A changed description or schema counts: a server can rewrite what a tool says it does
    under a name the policy already allows (the MCP spec's warning about list changes).
    """
    old = {tool.name: tool for tool in before}
    new = {tool.name: tool for tool in after}
    parts = []
    if added := [name for name in new if name not in old]:
        parts.append(f"added {', '.join(added)}")
    if removed := [name for name in old if name not in new]:
        parts.append(f"removed {', '.join(removed)}")
    if changed := [name for name in new if name in old and new[name] != old[name]]:
        parts.append(f"changed {', '.join(changed)} (description, schema or hints)")
    return "; ".join(parts) or None

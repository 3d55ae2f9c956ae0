"""A tool result as the model reads it: text kept, images and binary resources described.

Observations are text (`ToolResult.output`), so an image or a binary resource is described by
its type and size; a text resource is inlined under its URI. Imports the SDK's types.
"""

from __future__ import annotations

import base64
import binascii
import json

import mcp_types


def render_result(result: mcp_types.CallToolResult) -> str:
    """Every content block in order; the structured content when there is no other."""
    parts = [_block(block) for block in result.content]
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False, indent=1))
    return "\n".join(parts) if parts else "(no content)"


def _block(block: mcp_types.ContentBlock) -> str:
    match block:
        case mcp_types.TextContent():
            return block.text
        case mcp_types.ImageContent():
            return f"[image: {block.mime_type}, {_size(block.data)} bytes]"
        case mcp_types.AudioContent():
            return f"[audio: {block.mime_type}, {_size(block.data)} bytes]"
        case mcp_types.ResourceLink():
            mime = f", {block.mime_type}" if block.mime_type else ""
            return f"[resource link: {block.uri} ({block.name}{mime})]"
        case mcp_types.EmbeddedResource():
            inner = block.resource
            if isinstance(inner, mcp_types.TextResourceContents):
                return f"[resource {inner.uri}]\n{inner.text}"
            mime = inner.mime_type or "application/octet-stream"
            return f"[resource {inner.uri}: {mime}, {_size(inner.blob)} bytes]"


def _size(data: str) -> int:
    """Bytes of base64 `data` (its text length when it is not base64)."""
    try:
        return len(base64.b64decode(data, validate=True))
    except (binascii.Error, ValueError):
        return len(data)

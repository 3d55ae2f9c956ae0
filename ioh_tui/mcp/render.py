"""A tool result or a resource read as the model reads it: text kept, images shown, rest described.

An image block is described by its type and size in the text, and shown to the model as
`view_image` shows a file (`tools/images.py`: recognised by its bytes, scaled to the provider's
limits) when the model takes images; the description says whether it was. A binary resource is
described; a text resource is inlined under its URI. Imports the SDK's types.
"""

from __future__ import annotations

import base64
import binascii
import json

import mcp_types

from ioh_tui.core.transcript import Image
from ioh_tui.tools.images import SHOWN, blind, shown
from ioh_tui.tools.vision import Vision


def render_result(result: mcp_types.CallToolResult) -> str:
    """Every content block in order; the structured content when there is no other."""
    return render_shown(result, "", None, None)[0]


def render_shown(
    result: mcp_types.CallToolResult, name: str, vision: Vision | None, model: str | None
) -> tuple[str, tuple[Image, ...]]:
    """The text, and the images shown to a model taking images within `vision` (None: none).

    `name` names the images (`SERVER/TOOL`); `model` is named when an image is not shown.
    """
    images: list[Image] = []
    parts = []
    for block in result.content:
        if isinstance(block, mcp_types.ImageContent) and model is not None:
            parts.append(_image(block, name, vision, model, images))
        else:
            parts.append(_block(block))
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False, indent=1))
    return ("\n".join(parts) if parts else "(no content)"), tuple(images)


def render_contents(
    result: mcp_types.ReadResourceResult, name: str, vision: Vision | None, model: str | None
) -> tuple[str, tuple[Image, ...]]:
    """A resource read's contents as `render_shown` renders a result's (`name`: `SERVER/URI`).

    Text is inlined under its URI; a blob whose type is an image is shown as an image block is.
    """
    images: list[Image] = []
    parts = []
    for inner in result.contents:
        if isinstance(inner, mcp_types.TextResourceContents):
            parts.append(f"[resource {inner.uri}]\n{inner.text}")
        elif (mime := inner.mime_type or "").startswith("image/") and model is not None:
            block = mcp_types.ImageContent(type="image", data=inner.blob, mime_type=mime)
            parts.append(f"[resource {inner.uri}] {_image(block, name, vision, model, images)}")
        else:
            parts.append(_block(mcp_types.EmbeddedResource(type="resource", resource=inner)))
    return ("\n".join(parts) if parts else "(no contents)"), tuple(images)


def _image(
    block: mcp_types.ImageContent,
    name: str,
    vision: Vision | None,
    model: str,
    images: list[Image],
) -> str:
    described = _block(block)
    if vision is None:
        return f"{described} not shown: {blind(model)}"
    try:
        data = base64.b64decode(block.data, validate=True)
    except (binascii.Error, ValueError):
        return f"{described} not shown: its data is not base64"
    image, done = shown(data, f"{name} image {len(images) + 1}", vision)
    if image is None:
        return f"{described} not shown: {done}"
    images.append(image)
    how = f"; {done}" if done else ""
    return f"{described} {SHOWN} {image.describe()}{how}"


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

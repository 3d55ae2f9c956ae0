"""`view_image`: a workspace image, or stills of a workspace video, shown to the model.

The file is read as `read_file` reads (the same confinement, policy check and descriptor-based
open) and recognised by its first bytes, never its name: an image goes as it is or scaled
(`images.py`), a video as stills sampled in the sandbox (`video.py`; `frames` or `at` choose
them). One tool rather than two: the model has one thing to learn, to look at a file.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ioh_tui.tools.base import ToolContext, ToolResult, arg_str
from ioh_tui.tools.files import read_checked
from ioh_tui.tools.images import SHOWN, ImageError, blind, fitted, sniff
from ioh_tui.tools.video import KINDS, sniff_video, times, view_video


async def view_image(args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
    """Read `path` as read_file would, and attach it (or a video's stills) when the model sees."""
    rel = ctx.workspace.normalise(arg_str(args, "path"))
    vision = ctx.vision
    if vision is None:
        return ToolResult(
            f"[view_image {rel} refused] {blind(ctx.model)}, so nothing was attached (ocr reads "
            "the text in an image).",
            ok=False,
            refused=True,
        )
    data = await read_checked(ctx, rel, "view_image")
    if isinstance(data, ToolResult):
        return data
    if (kind := sniff_video(data)) is not None:
        return await view_video(rel, data, kind, args, ctx, vision)
    media_type = sniff(data)
    if media_type is None:
        return ToolResult(
            f"[view_image {rel} error] {rel} is not a PNG, JPEG, GIF or WebP image, nor a "
            f"{KINDS} (by its first bytes; {len(data):,} bytes)",
            ok=False,
        )
    if args.get("frames") is not None or args.get("at") is not None:
        times(args)  # a malformed choice is said as such first
        return ToolResult(
            f"[view_image {rel} error] frames and at choose a video's stills; {rel} is an image",
            ok=False,
        )
    try:
        image, done = fitted(data, media_type, rel, vision)
    except ImageError as exc:
        return ToolResult(f"[view_image {rel} error] {rel}: {exc}", ok=False)
    how = f"; {done}" if done else ""
    return ToolResult(
        f"[view_image {rel}] {SHOWN} {image.describe()}{how}",
        images=(image,),
        meta={"path": rel},
    )

"""The scan tools: `ocr` (an image or a scanned PDF page), `barcode_read`, `barcode_write`.

Like the document tools, each act is decided first and the work runs in the document worker in
the sandbox: an image is untrusted input to Tesseract and zxing-cpp as a document is to its parser.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ioh_tui.documents.scan import IMAGES, KINDS
from ioh_tui.tools.base import ArgumentError, ToolContext, ToolResult, arg_int, arg_str, cap
from ioh_tui.tools.docwork import Stop, decide_write, readable, target, work

EXTRA = "ioh-tui[scan]"


async def ocr(args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
    """The text in an image, or in the images of one page of a scanned PDF."""
    verb = "ocr"
    page = arg_int(args, "page")
    try:
        rel = await readable(ctx, arg_str(args, "path"), verb, (*IMAGES, ".pdf"))
        done = await work(ctx, verb, {"op": "ocr", "path": rel, "page": page}, EXTRA)
    except Stop as stop:
        return stop.result
    text = done["text"] or "(no text found)"
    return ToolResult(cap(f"[ocr {rel}]\n{text}", ctx.entry_cap))


async def barcode_read(args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
    """Every barcode and QR code in an image, with its format."""
    verb = "barcode_read"
    try:
        rel = await readable(ctx, arg_str(args, "path"), verb, IMAGES)
        done = await work(ctx, verb, {"op": "barcode_read", "path": rel}, EXTRA)
    except Stop as stop:
        return stop.result
    codes = done["data"]
    lines = [f"{c['format']}: {c['text']}" for c in codes] or ["(no code found)"]
    return ToolResult(
        cap(f"[barcode_read {rel}] {len(codes)} codes\n" + "\n".join(lines), ctx.entry_cap)
    )


async def barcode_write(args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
    """Write data as a QR code (default), Code 128 or EAN-13 barcode image (.png or .svg)."""
    verb = "barcode_write"
    data = arg_str(args, "data")
    kind = arg_str(args, "kind", required=False) or "qr"
    if kind not in KINDS:
        raise ArgumentError(f"kind must be one of {', '.join(KINDS)}")
    try:
        rel = target(ctx, arg_str(args, "path"), (".png", ".svg"))
        await decide_write(ctx, verb, rel, None, f"{kind} code holding {data!r} -> {rel}")
        done = await work(
            ctx, verb, {"op": "barcode_write", "path": rel, "data": data, "kind": kind}, EXTRA
        )
    except Stop as stop:
        return stop.result
    return ToolResult(f"[barcode_write {rel}] {kind} code holding {done['data']!r}", changed=True)

"""The document tools: read, write and edit office documents and PDFs, and the PDF operations.

Each act is decided first (a `read` of every input, a `write` of the output, previewed as the text
of the document before and after), then the work is done by `ioh_tui.documents.worker` in the
run's sandbox: parsing untrusted documents is capped and contained like any command.
"""

from __future__ import annotations

import contextlib
import difflib
import json
from collections.abc import Mapping
from typing import Any

from ioh_tui.documents import KINDS
from ioh_tui.tools.base import (
    ArgumentError,
    ToolContext,
    ToolResult,
    arg_str,
    cap,
)
from ioh_tui.tools.docwork import Stop, decide_write, readable, target, work

_PREVIEW_LINES = 400


async def read_document(args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
    """A document as text with its structure (pages, sheets, slides, tables as rows)."""
    verb = "read_document"
    try:
        rel = await readable(ctx, arg_str(args, "path"), verb, KINDS)
        request = {"op": "read", "path": rel}
        for key in ("pages", "sheet", "range"):
            if args.get(key) is not None:
                request[key] = arg_str(args, key)
        answer = await work(ctx, verb, request)
    except Stop as stop:
        return stop.result
    return ToolResult(cap(f"[{verb} {rel}]\n{answer['text']}", ctx.entry_cap))


async def write_document(args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
    """Create or replace a document from structured content; the person asked sees its text."""
    verb = "write_document"
    content = _object(args, "content")
    try:
        rel = target(ctx, arg_str(args, "path"), KINDS)
        trial = await work(
            ctx,
            verb,
            {"op": "write", "path": rel, "content": content, "dry_run": True, "compare": True},
        )
        answer = await decide_write(
            ctx, verb, rel, json.dumps(content, indent=1), _change(rel, trial)
        )
        if answer.content is not None and answer.content != json.dumps(content, indent=1):
            content = _rewritten(answer.content, verb)
        await work(ctx, verb, {"op": "write", "path": rel, "content": content})
    except Stop as stop:
        return stop.result
    note = f"\n{answer.note}" if answer.note else ""
    lines = trial["after"].count("\n") + 1
    return ToolResult(f"[{verb} {rel}] written ({lines} lines of text){note}", changed=True)


async def edit_document(args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
    """Apply edits to a document; the person asked sees the change to its text."""
    verb = "edit_document"
    edits = args.get("edits")
    if not isinstance(edits, list) or not edits or not all(isinstance(e, dict) for e in edits):
        raise ArgumentError("edits must be a non-empty list of edit objects")
    try:
        rel = target(ctx, arg_str(args, "path"), KINDS)
        trial = await work(ctx, verb, {"op": "edit", "path": rel, "edits": edits, "dry_run": True})
        diff = _diff(rel, trial["before"], trial["after"])
        answer = await decide_write(ctx, verb, rel, json.dumps(edits, indent=1), diff)
        if answer.content is not None and answer.content != json.dumps(edits, indent=1):
            edits = _rewritten(answer.content, verb)
        done = await work(ctx, verb, {"op": "edit", "path": rel, "edits": edits})
    except Stop as stop:
        return stop.result
    shown = _diff(rel, done["before"], done["after"]) or "(the text is unchanged)"
    note = f"\n{answer.note}" if answer.note else ""
    return ToolResult(
        cap(f"[{verb} {rel}] {len(edits)} edits applied{note}\n{shown}", ctx.entry_cap),
        changed=True,
    )


async def pdf_watermark(args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
    """Stamp text across every page (or the chosen pages) of a PDF."""
    verb = "pdf_watermark"
    text = arg_str(args, "text")
    pages = arg_str(args, "pages", required=False) or None
    try:
        rel = await readable(ctx, arg_str(args, "path"), verb, (".pdf",))
        out = target(ctx, arg_str(args, "output", required=False) or rel, (".pdf",))
        where = f"pages {pages}" if pages else "every page"
        await decide_write(ctx, verb, out, None, f"watermark {text!r} on {where} of {rel} -> {out}")
        done = await work(
            ctx, verb, {"op": verb, "path": rel, "text": text, "output": out, "pages": pages}
        )
    except Stop as stop:
        return stop.result
    return ToolResult(f"[{verb}] stamped {done['data']} pages of {rel} -> {out}", changed=True)


async def pdf_fill_form(args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
    """List a PDF's form fields (no `fields`), or fill them and read them back."""
    verb = "pdf_fill_form"
    fields = args.get("fields") or {}
    if not isinstance(fields, dict) or not all(
        isinstance(v, str | int | float) for v in fields.values()
    ):
        raise ArgumentError("fields must map field names to values")
    try:
        rel = await readable(ctx, arg_str(args, "path"), verb, (".pdf",))
        if not fields:
            listed = await work(ctx, verb, {"op": "pdf_fields", "path": rel})
            names = listed["data"]
            body = "\n".join(f"{k} = {v!r}" for k, v in sorted(names.items())) or "(no form fields)"
            return ToolResult(f"[{verb} {rel}] {len(names)} fields\n{body}")
        values = {str(k): str(v) for k, v in fields.items()}
        out = target(ctx, arg_str(args, "output", required=False) or rel, (".pdf",))
        preview = f"fill {len(values)} fields of {rel} -> {out}\n" + "\n".join(
            f"{k} = {v}" for k, v in values.items()
        )
        await decide_write(ctx, verb, out, None, preview)
        done = await work(ctx, verb, {"op": verb, "path": rel, "fields": values, "output": out})
    except Stop as stop:
        return stop.result
    back = "\n".join(f"{k} = {done['data'].get(k)!r}" for k in values)
    return ToolResult(f"[{verb}] {out}: fields now\n{back}", changed=True)


async def pdf_merge(args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
    """Concatenate PDFs into one."""
    verb = "pdf_merge"
    paths = args.get("paths")
    if not isinstance(paths, list) or len(paths) < 2 or not all(isinstance(p, str) for p in paths):
        raise ArgumentError("paths must list at least two PDFs")
    try:
        inputs = [await readable(ctx, p, verb, (".pdf",)) for p in paths]
        out = target(ctx, arg_str(args, "output"), (".pdf",))
        await decide_write(ctx, verb, out, None, f"merge {', '.join(inputs)} -> {out}")
        done = await work(ctx, verb, {"op": verb, "paths": inputs, "output": out})
    except Stop as stop:
        return stop.result
    return ToolResult(
        f"[{verb}] {out}: {done['data']} pages from {len(inputs)} files", changed=True
    )


async def pdf_split(args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
    """Write the chosen pages of a PDF to a new one."""
    verb = "pdf_split"
    pages = arg_str(args, "pages")
    try:
        rel = await readable(ctx, arg_str(args, "path"), verb, (".pdf",))
        out = target(ctx, arg_str(args, "output"), (".pdf",))
        await decide_write(ctx, verb, out, None, f"pages {pages} of {rel} -> {out}")
        done = await work(ctx, verb, {"op": verb, "path": rel, "pages": pages, "output": out})
    except Stop as stop:
        return stop.result
    return ToolResult(f"[{verb}] {out}: {done['data']} pages of {rel}", changed=True)


def _object(args: Mapping[str, Any], name: str) -> dict[str, Any]:
    value = args.get(name)
    if isinstance(value, str):
        with contextlib.suppress(ValueError):
            value = json.loads(value)
    if not isinstance(value, dict):
        raise ArgumentError(f"{name} must be an object (see the tool's description)")
    return value


def _rewritten(text: str, verb: str) -> Any:
    try:
        return json.loads(text)
    except ValueError as exc:
        raise Stop(
            ToolResult(
                f"[{verb} refused] the rewritten JSON does not parse: {exc}", ok=False, refused=True
            )
        ) from None


def _change(rel: str, trial: Mapping[str, Any]) -> str:
    if trial.get("before"):
        return _diff(rel, trial["before"], trial["after"]) or "(the text is unchanged)"
    return f"new document {rel}, as text:\n{trial['after']}"


def _diff(rel: str, before: str, after: str) -> str:
    lines = list(
        difflib.unified_diff(
            before.splitlines(), after.splitlines(), f"a/{rel}", f"b/{rel}", lineterm=""
        )
    )
    if len(lines) > _PREVIEW_LINES:
        lines = [*lines[:_PREVIEW_LINES], f"[... {len(lines) - _PREVIEW_LINES} more lines ...]"]
    return "\n".join(lines)

"""read_file, write_file, edit_file, list_dir: confined to the workspace, every act decided."""

from __future__ import annotations

import difflib
import hashlib
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ioh_tui.core.acts import Act
from ioh_tui.tools.base import (
    ArgumentError,
    Deferral,
    Permit,
    Refusal,
    ToolContext,
    ToolResult,
    arg_int,
    arg_str,
)
from ioh_tui.tools.checker import check_after_edit
from ioh_tui.tools.workspace import Escape

_IMAGE = {
    ".png",
    ".jpg",
    ".jpeg",
    ".gif",
    ".webp",
    ".bmp",
    ".tif",
    ".tiff",
    ".ico",
    ".heic",
    ".avif",
}
_DOCUMENT = {".pdf", ".docx", ".xlsx", ".pptx"}
_MAX_LIST = 200


def _sniff(data: bytes) -> str:
    """A name for a binary file's kind."""
    for magic, name in (
        (b"\x7fELF", "an ELF executable"),
        (b"PK\x03\x04", "a ZIP archive"),
        (b"\x1f\x8b", "gzip data"),
        (b"%PDF", "a PDF document"),
        (b"\x00asm", "WebAssembly"),
        (b"SQLite format 3", "an SQLite database"),
    ):
        if data.startswith(magic):
            return name
    return "binary data"


def decode_text(path: Path, data: bytes) -> str | None:
    """The file's text, or None when it is not text (images, documents, binary)."""
    if path.suffix.lower() in _IMAGE | _DOCUMENT:
        return None
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    if b"\x00" in data[:8192]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _not_text(rel: str, path: Path, data: bytes) -> str:
    suffix = path.suffix.lower()
    if suffix in _IMAGE:
        kind = "an image"
    elif suffix in _DOCUMENT:
        kind = f"a {suffix[1:].upper()} document"
    else:
        kind = _sniff(data)
    return (
        f"[read {rel} refused] {rel} is {kind} ({len(data):,} bytes), not text; "
        "read_file shows text only."
    )


def _subject_check(ctx: ToolContext, path: str) -> str | None:
    """In single-file mode, a refusal for any path but the subject."""
    if ctx.subject is None:
        return None
    rel = ctx.workspace.normalise(path) if path else ctx.subject
    if rel != ctx.subject:
        return f"[refused] this run may only touch {ctx.subject}"
    return None


async def read_file(args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
    """Return the whole file, the asked line range, or a refusal naming the size ceiling."""
    path = arg_str(args, "path", required=ctx.subject is None, default=ctx.subject or "")
    start, end = arg_int(args, "start_line"), arg_int(args, "end_line")
    if (refused := _subject_check(ctx, path)) is not None:
        return ToolResult(refused, ok=False, refused=True)
    rel, absolute = ctx.workspace.resolve(path)
    answer = await ctx.decide(Act.READ, rel)
    if isinstance(answer, Refusal):
        return ToolResult(answer.observation, ok=False, refused=True)
    if isinstance(answer, Deferral):
        return ToolResult("[read deferred]", ok=False, deferred=answer.request_id)
    try:
        data = absolute.read_bytes()
    except FileNotFoundError:
        return ToolResult(f"[read {rel} error] no such file", ok=False)
    except IsADirectoryError:
        return ToolResult(f"[read {rel} error] {rel} is a directory; use list_dir", ok=False)
    text = decode_text(absolute, data)
    if text is None:
        return ToolResult(_not_text(rel, absolute, data), ok=False, refused=True)
    lines = text.splitlines(keepends=True)
    if start is None and end is None:
        body, header = text, f"[read {rel}] ({len(lines)} lines)"
    else:
        first = start or 1
        last = min(end or len(lines), len(lines))
        if first > len(lines) or first > last:
            return ToolResult(
                f"[read {rel} error] line {first} is past the end ({len(lines)} lines)", ok=False
            )
        body = "".join(lines[first - 1 : last])
        header = f"[read {rel} (lines {first}-{last} of {len(lines)})]"
    if len(body) > ctx.entry_cap:
        return ToolResult(
            f"[read {rel} refused] {len(body):,} characters is over the "
            f"{ctx.entry_cap:,}-character "
            f"ceiling for one read ({len(lines)} lines in the file); read a line range "
            "with start_line and end_line.",
            ok=False,
            refused=True,
        )
    return ToolResult(f"{header}\n{body}")


def unified_diff(rel: str, before: str | None, after: str) -> str:
    """A unified diff of a write (`before` None: the file is new)."""
    old = [] if before is None else before.splitlines(keepends=True)
    new = after.splitlines(keepends=True)
    lines = difflib.unified_diff(
        old, new, "/dev/null" if before is None else f"a/{rel}", f"b/{rel}"
    )
    return "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines
    )


def _current(absolute: Path) -> str | None:
    try:
        data = absolute.read_bytes()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None
    return decode_text(absolute, data)


async def _gated_write(
    ctx: ToolContext, rel: str, before: str | None, after: str, verb: str
) -> ToolResult:
    """Ask the decider to write `after` to `rel`, then write what was approved (maybe rewritten)."""
    answer = await ctx.decide(
        Act.WRITE, rel, content=after, preview=unified_diff(rel, before, after)
    )
    if isinstance(answer, Refusal):
        return ToolResult(answer.observation, ok=False, refused=True)
    if isinstance(answer, Deferral):
        return ToolResult(f"[{verb} {rel} deferred]", ok=False, deferred=answer.request_id)
    return await _apply(ctx, answer, before if answer.target == rel else None, after, verb)


async def _apply(
    ctx: ToolContext, permit: Permit, before: str | None, after: str, verb: str
) -> ToolResult:
    try:
        rel, absolute = ctx.workspace.resolve(permit.target)
    except Escape as exc:
        return ToolResult(f"[{verb} refused] {exc}", ok=False, refused=True)
    content = after if permit.content is None else permit.content
    if permit.target != rel or before is None:
        before = _current(absolute)
    state = "created" if before is None else ("unchanged" if before == content else "changed")
    note = f"\n{permit.note}" if permit.note else ""
    output = f"[{verb} {rel}] ({len(content):,} characters, {state}){note}"
    if state != "unchanged":
        if ctx.journal is not None:
            await ctx.journal({"path": rel, "sha256": content_hash(content), "output": output})
        write_atomic(absolute, content)
        # After the write, so a checker that fails can never undo or fail the edit.
        output += await check_after_edit(ctx, rel)
    return ToolResult(output, changed=state != "unchanged", meta={"path": rel, "state": state})


def content_hash(content: str) -> str:
    """The digest a journal keeps of written content."""
    return hashlib.sha256(content.encode("utf-8")).hexdigest()


def write_atomic(path: Path, content: str) -> None:
    """Write a file so that a crash leaves either the old or the new content, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(content)
        mode = path.stat().st_mode & 0o7777 if path.exists() else 0o644
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


async def write_file(args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
    """Create or replace a file with the given content."""
    path = arg_str(args, "path", required=ctx.subject is None, default=ctx.subject or "")
    content = arg_str(args, "content")
    if (refused := _subject_check(ctx, path)) is not None:
        return ToolResult(refused, ok=False, refused=True)
    rel, absolute = ctx.workspace.resolve(path)
    if absolute.is_dir():
        return ToolResult(f"[write {rel} error] {rel} is a directory", ok=False)
    return await _gated_write(ctx, rel, _current(absolute), content, "wrote")


async def edit_file(args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
    """Replace the one occurrence of `old_text` with `new_text`."""
    path = arg_str(args, "path")
    old, new = arg_str(args, "old_text"), arg_str(args, "new_text")
    if not old:
        raise ArgumentError("old_text must not be empty")
    if (refused := _subject_check(ctx, path)) is not None:
        return ToolResult(refused, ok=False, refused=True)
    rel, absolute = ctx.workspace.resolve(path)
    before = _current(absolute)
    if before is None:
        return ToolResult(f"[edit {rel} error] no such text file", ok=False)
    count = before.count(old)
    if count != 1:
        where = "does not occur" if count == 0 else f"occurs {count} times"
        return ToolResult(
            f"[edit {rel} error] old_text {where} in {rel}; it must match exactly once "
            "(include more surrounding lines). Nothing was changed.",
            ok=False,
        )
    return await _gated_write(ctx, rel, before, before.replace(old, new, 1), "edited")


async def list_dir(args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
    """One level of a directory; entries the policy denies are not shown."""
    path = arg_str(args, "path", required=False)
    rel, absolute = ctx.workspace.resolve(path)
    answer = await ctx.decide(Act.READ, rel)
    if isinstance(answer, Refusal):
        return ToolResult(answer.observation, ok=False, refused=True)
    if isinstance(answer, Deferral):
        return ToolResult("[list_dir deferred]", ok=False, deferred=answer.request_id)
    if not absolute.is_dir():
        return ToolResult(f"[list_dir {rel or '.'} error] not a directory", ok=False)
    lines = []
    for entry in sorted(absolute.iterdir(), key=lambda p: p.name):
        name = f"{rel}/{entry.name}" if rel else entry.name
        if not ctx.visible(name):
            continue
        if entry.is_symlink():
            lines.append(f"link {entry.name}")
        elif entry.is_dir():
            lines.append(f"dir  {entry.name}/")
        else:
            lines.append(f"file {entry.name} ({entry.stat().st_size:,} bytes)")
    shown = lines[:_MAX_LIST]
    more = f"\n({len(lines) - _MAX_LIST} more entries not shown)" if len(lines) > _MAX_LIST else ""
    return ToolResult(f"[list_dir {rel or '.'}] ({len(lines)} entries)\n" + "\n".join(shown) + more)

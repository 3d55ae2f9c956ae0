"""read_file, write_file, edit_file, list_dir: confined to the workspace, every act decided."""

from __future__ import annotations

import difflib
import hashlib
import os
import stat
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
from ioh_tui.tools.beneath import TooLarge, locate, names, open_in, read_fd, write_spot
from ioh_tui.tools.checker import check_after_edit
from ioh_tui.tools.workspace import Escape, Workspace

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
MAX_READ_BYTES = 64 * 1024 * 1024
"""The largest file a tool reads; checked on the open descriptor before a byte is read."""


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
    hint = " (read_document reads documents)" if suffix in _DOCUMENT else ""
    return (
        f"[read {rel} refused] {rel} is {kind} ({len(data):,} bytes), not text; "
        f"read_file shows text only{hint}."
    )


def _subject_check(ctx: ToolContext, path: str) -> str | None:
    """In single-file mode, a refusal for any path but the subject."""
    if ctx.subject is None:
        return None
    rel = ctx.workspace.normalise(path) if path else ctx.subject
    if rel != ctx.subject:
        return f"[refused] this run may only touch {ctx.subject}"
    return None


def _read_error(verb: str, rel: str, exc: OSError) -> ToolResult:
    """The observation for a file that cannot be read (missing, a directory, a FIFO, too large)."""
    if isinstance(exc, FileNotFoundError):
        return ToolResult(f"[{verb} {rel} error] no such file", ok=False)
    if isinstance(exc, IsADirectoryError):
        return ToolResult(f"[{verb} {rel} error] {rel} is a directory; use list_dir", ok=False)
    if isinstance(exc, NotADirectoryError):
        return ToolResult(f"[{verb} {rel} error] a part of {rel} is not a directory", ok=False)
    return ToolResult(f"[{verb} {rel} error] {exc.strerror or exc}", ok=False)


def _too_large(verb: str, rel: str, exc: TooLarge) -> ToolResult:
    return ToolResult(
        f"[{verb} {rel} refused] the file is {exc.size:,} bytes, over the {exc.limit:,}-byte "
        "ceiling for a file a tool reads; nothing was read. Use exec (head, sed -n) for a part.",
        ok=False,
        refused=True,
    )


def _open(
    ctx: ToolContext, rel: str, flags: int = os.O_RDONLY
) -> tuple[int | None, str, OSError | None]:
    """A descriptor of `rel` reached beneath the root, its resolved path, or why it failed.

    Raises:
        Escape: the path (a symlink on it) leaves the workspace.
    """
    try:
        with locate(ctx.workspace.root, rel) as spot:
            return open_in(spot, flags), spot.real, None
    except OSError as exc:
        return None, rel, exc


async def _read_decided(ctx: ToolContext, rel: str, real: str, verb: str) -> ToolResult | None:
    """The policy on reading `rel` (and its resolved form): None to go on, else the result."""
    answer = await ctx.decide(Act.READ, rel, also=(real,) if real != rel else ())
    if isinstance(answer, Refusal):
        return ToolResult(answer.observation, ok=False, refused=True)
    if isinstance(answer, Deferral):
        return ToolResult(f"[{verb} deferred]", ok=False, deferred=answer.request_id)
    return None


async def read_checked(ctx: ToolContext, rel: str, verb: str) -> bytes | ToolResult:
    """The bytes of `rel` once the policy lets them be read, or the result saying why not.

    Opened before the decision and read through the same descriptor after it: what the policy
    judged (the path and its symlink-resolved form) is what is read, whatever moves meanwhile.

    Raises:
        Escape: the path (a symlink on it) leaves the workspace.
    """
    fd, real, failed = _open(ctx, rel)
    try:
        if (stopped := await _read_decided(ctx, rel, real, verb)) is not None:
            return stopped
        if fd is None:
            assert failed is not None
            raise failed
        if (linked := ctx.linked(Act.READ, real, names(fd), verb)) is not None:
            return linked
        return read_fd(fd, MAX_READ_BYTES)
    except TooLarge as exc:
        return _too_large(verb, rel, exc)
    except OSError as exc:
        return _read_error(verb, rel, exc)
    finally:
        if fd is not None:
            os.close(fd)


async def read_file(args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
    """Return the whole file, the asked line range, or a refusal naming the size ceiling."""
    path = arg_str(args, "path", required=ctx.subject is None, default=ctx.subject or "")
    start, end = arg_int(args, "start_line"), arg_int(args, "end_line")
    if (refused := _subject_check(ctx, path)) is not None:
        return ToolResult(refused, ok=False, refused=True)
    rel = ctx.workspace.normalise(path)
    data = await read_checked(ctx, rel, "read")
    if isinstance(data, ToolResult):
        return data
    absolute = Path(rel or ".")
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


def _current(ctx: ToolContext, rel: str, verb: str) -> tuple[str | None, ToolResult | None]:
    """The text a write would replace (None: no such file, or not text), or why it is refused.

    A file with other names (hard links) is refused unless the policy lets it be written as this
    name (`ToolContext.linked`): it is not even read, so a diff or an edit's match cannot show it.
    """
    try:
        with locate(ctx.workspace.root, rel) as spot:
            real = spot.real
            fd = open_in(spot)
    except OSError:
        return None, None
    try:
        if (linked := ctx.linked(Act.WRITE, real, names(fd), verb)) is not None:
            return None, linked
        data = read_fd(fd, MAX_READ_BYTES)
    except (OSError, TooLarge):
        return None, None
    finally:
        os.close(fd)
    return decode_text(Path(rel or "."), data), None


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
        rel = ctx.workspace.normalise(permit.target)
    except Escape as exc:
        return ToolResult(f"[{verb} refused] {exc}", ok=False, refused=True)
    content = after if permit.content is None else permit.content
    if permit.target != rel or before is None:
        before, linked = _current(ctx, rel, verb)
        if linked is not None:
            return linked
    state = "created" if before is None else ("unchanged" if before == content else "changed")
    note = f"\n{permit.note}" if permit.note else ""
    output = f"[{verb} {rel}] ({len(content):,} characters, {state}){note}"
    if state != "unchanged":
        if ctx.journal is not None:
            await ctx.journal({"path": rel, "sha256": content_hash(content), "output": output})
        write_atomic(ctx.workspace, rel, content)
        # After the write, so a checker that fails can never undo or fail the edit.
        output += await check_after_edit(ctx, rel)
    return ToolResult(output, changed=state != "unchanged", meta={"path": rel, "state": state})


def content_hash(content: str) -> str:
    """The digest a journal keeps of written content."""
    return hashlib.sha256(content.encode("utf-8")).hexdigest()


def write_atomic(workspace: Workspace, rel: str, content: str) -> None:
    """Write a workspace file so that a crash leaves the old or the new content, never half.

    The directory is reached through descriptors from the root (`beneath.locate`), so a directory
    swapped for a symlink meanwhile cannot carry the write outside the workspace.

    Raises:
        Escape: the path leaves the workspace (now).
        OSError: the file cannot be written.
    """
    with locate(workspace.root, rel, make_dirs=True) as spot:
        write_spot(spot, content)


async def write_file(args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
    """Create or replace a file with the given content."""
    path = arg_str(args, "path", required=ctx.subject is None, default=ctx.subject or "")
    content = arg_str(args, "content", text=True)
    if (refused := _subject_check(ctx, path)) is not None:
        return ToolResult(refused, ok=False, refused=True)
    rel = ctx.workspace.normalise(path)
    ctx.workspace.resolve(rel)  # an escape is refused before the decider asks anyone
    if _is_dir(ctx, rel):
        return ToolResult(f"[write {rel} error] {rel} is a directory", ok=False)
    before, linked = _current(ctx, rel, "write")
    if linked is not None:
        return linked
    return await _gated_write(ctx, rel, before, content, "wrote")


async def edit_file(args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
    """Replace the one occurrence of `old_text` with `new_text`."""
    path = arg_str(args, "path")
    old, new = arg_str(args, "old_text", text=True), arg_str(args, "new_text", text=True)
    if not old:
        raise ArgumentError("old_text must not be empty")
    if (refused := _subject_check(ctx, path)) is not None:
        return ToolResult(refused, ok=False, refused=True)
    rel, _ = ctx.workspace.resolve(path)
    before, linked = _current(ctx, rel, "edit")
    if linked is not None:
        return linked
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


def _is_dir(ctx: ToolContext, rel: str) -> bool:
    try:
        with locate(ctx.workspace.root, rel) as spot:
            if not spot.name:
                return True
            info = os.stat(spot.name, dir_fd=spot.dir_fd, follow_symlinks=False)
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode)


async def list_dir(args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
    """One level of a directory; entries the policy denies are not shown."""
    path = arg_str(args, "path", required=False)
    rel = ctx.workspace.normalise(path)
    fd, real, _ = _open(ctx, rel, os.O_RDONLY | os.O_DIRECTORY)
    try:
        if (stopped := await _read_decided(ctx, rel, real, "list_dir")) is not None:
            return stopped
        if fd is None:
            return ToolResult(f"[list_dir {rel or '.'} error] not a directory", ok=False)
        lines = _entries(ctx, fd, rel)
    finally:
        if fd is not None:
            os.close(fd)
    shown = lines[:_MAX_LIST]
    more = f"\n({len(lines) - _MAX_LIST} more entries not shown)" if len(lines) > _MAX_LIST else ""
    return ToolResult(f"[list_dir {rel or '.'}] ({len(lines)} entries)\n" + "\n".join(shown) + more)


def _entries(ctx: ToolContext, fd: int, rel: str) -> list[str]:
    """The listing of the open directory `fd`, read through it (never by name again)."""
    lines = []
    with os.scandir(fd) as scan:
        entries = sorted(scan, key=lambda e: e.name)
    for entry in entries:
        name = f"{rel}/{entry.name}" if rel else entry.name
        if not ctx.visible(name):
            continue
        try:
            if entry.is_symlink():
                lines.append(f"link {entry.name}")
            elif entry.is_dir(follow_symlinks=False):
                lines.append(f"dir  {entry.name}/")
            else:
                size = entry.stat(follow_symlinks=False).st_size
                lines.append(f"file {entry.name} ({size:,} bytes)")
        except OSError:
            continue
    return lines

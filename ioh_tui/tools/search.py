"""grep and find over the workspace; files the policy denies for reading are never revealed."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
from collections.abc import Callable, Iterator, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

from ioh_tui.tools.base import ArgumentError, ToolContext, ToolResult, arg_bool, arg_str
from ioh_tui.tools.beneath import TooLarge, locate, read_fd, read_spot, walk_files
from ioh_tui.tools.files import MAX_READ_BYTES, decode_text

MAX_HITS = 50
MAX_FOUND = 200
_LINE_CHARS = 300


async def grep(args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
    """Lines containing `pattern` (a substring, or a regex with `regex: true`)."""
    pattern = arg_str(args, "pattern")
    if not pattern:
        raise ArgumentError("pattern must not be empty")
    rel_start = ctx.workspace.normalise(arg_str(args, "path", required=False))
    if arg_bool(args, "regex"):
        try:
            hit: Callable[[str], object] = re.compile(pattern).search
        except re.error as exc:
            return ToolResult(
                f'[grep "{pattern}" error] not a valid regular expression: {exc}', ok=False
            )
    else:

        def hit(line: str) -> bool:
            return pattern in line

    # A walk over a large tree must not stall the event loop (and the app drawing on it).
    hits, total = await asyncio.to_thread(_scan, ctx, rel_start, hit)
    where = f" in {rel_start}" if rel_start else ""
    if not hits:
        return ToolResult(f'[grep "{pattern}"{where}] no matches')
    more = ""
    if total > MAX_HITS:
        more = f"\n({total - MAX_HITS} more matches not shown; narrow the pattern or the path)"
    return ToolResult(f'[grep "{pattern}"{where}] {total} matches\n' + "\n".join(hits) + more)


def _files(ctx: ToolContext, rel: str) -> Iterator[tuple[str, bytes]]:
    """The readable files under `rel` (or `rel` itself) and their bytes, read beneath the root.

    Each file is opened relative to the descriptor of the directory the walk holds, without
    following a symlink, so a directory swapped for a link mid-walk is never read through.
    """
    try:
        spot = locate(ctx.workspace.root, rel)
    except OSError:
        return
    with spot:
        base = spot.real
        if spot.name:
            if _readable(ctx, rel) and (not base or _readable(ctx, base)):
                with contextlib.suppress(OSError, TooLarge):
                    yield rel, read_spot(spot, MAX_READ_BYTES)
            return
        for name, dir_fd, leaf in walk_files(spot):
            shown = f"{base}/{name}" if base else name
            if not _readable(ctx, shown):
                continue
            try:
                fd = os.open(leaf, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=dir_fd)
            except OSError:
                continue
            try:
                yield shown, read_fd(fd, MAX_READ_BYTES)
            except (OSError, TooLarge):
                continue
            finally:
                os.close(fd)


def _readable(ctx: ToolContext, rel: str) -> bool:
    """Whether grep may show this file's content: shown by the policy and readable unasked."""
    return ctx.visible(rel) and (ctx.readable is None or ctx.readable(rel))


def _scan(ctx: ToolContext, rel: str, hit: Callable[[str], object]) -> tuple[list[str], int]:
    """Matching lines (the first `MAX_HITS`) and how many there are in all."""
    hits: list[str] = []
    total = 0
    for shown, data in _files(ctx, rel):
        text = decode_text(Path(shown), data)
        for number, line in enumerate((text or "").splitlines(), 1):
            if hit(line):
                total += 1
                if len(hits) < MAX_HITS:
                    hits.append(f"{shown}:{number}: {line[:_LINE_CHARS]}")
    return hits, total


async def find(args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
    """Workspace-relative paths matching a glob (`*` within a name, `**` across directories).

    A pattern without `/` is matched against file names too, so `*.py` finds them at any depth.
    """
    pattern = arg_str(args, "pattern")
    if not pattern:
        raise ArgumentError("pattern must not be empty")
    found = _matching(ctx, pattern)
    if not found:
        return ToolResult(f'[find "{pattern}"] no matches')
    more = f"\n({len(found) - MAX_FOUND} more not shown)" if len(found) > MAX_FOUND else ""
    return ToolResult(
        f'[find "{pattern}"] {len(found)} files\n' + "\n".join(found[:MAX_FOUND]) + more
    )


def _matching(ctx: ToolContext, pattern: str) -> list[str]:
    matcher = _glob(pattern)
    found = []
    with locate(ctx.workspace.root, "") as root:
        for rel, _, name in walk_files(root):
            named = matcher.fullmatch(rel) or ("/" not in pattern and matcher.fullmatch(name))
            if named and ctx.visible(rel):
                found.append(rel)
    return found


@lru_cache(maxsize=256)
def _glob(pattern: str) -> re.Pattern[str]:
    out = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        out.append("[^/]*" if char == "*" else "[^/]" if char == "?" else re.escape(char))
        i += 1
    return re.compile("".join(out), re.DOTALL)

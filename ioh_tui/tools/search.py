"""grep and find over the workspace; files the policy denies for reading are never revealed."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

from ioh_tui.tools.base import ArgumentError, ToolContext, ToolResult, arg_bool, arg_str
from ioh_tui.tools.files import decode_text

MAX_HITS = 50
MAX_FOUND = 200
_LINE_CHARS = 300


async def grep(args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
    """Lines containing `pattern` (a substring, or a regex with `regex: true`)."""
    pattern = arg_str(args, "pattern")
    if not pattern:
        raise ArgumentError("pattern must not be empty")
    rel_start, start = ctx.workspace.resolve(arg_str(args, "path", required=False))
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
    hits, total = await asyncio.to_thread(_scan, ctx, start, hit)
    where = f" in {rel_start}" if rel_start else ""
    if not hits:
        return ToolResult(f'[grep "{pattern}"{where}] no matches')
    more = ""
    if total > MAX_HITS:
        more = f"\n({total - MAX_HITS} more matches not shown; narrow the pattern or the path)"
    return ToolResult(f'[grep "{pattern}"{where}] {total} matches\n' + "\n".join(hits) + more)


def _scan(ctx: ToolContext, start: Path, hit: Callable[[str], object]) -> tuple[list[str], int]:
    """Matching lines (the first `MAX_HITS`) and how many there are in all."""
    if start.is_file():
        files = [start]
    else:
        files = ctx.workspace.walk_files(start) if start.is_dir() else []
    hits: list[str] = []
    total = 0
    for path in files:
        rel = ctx.workspace.relative(path)
        if not ctx.visible(rel):
            continue
        try:
            text = decode_text(path, path.read_bytes())
        except OSError:
            continue
        for number, line in enumerate((text or "").splitlines(), 1):
            if hit(line):
                total += 1
                if len(hits) < MAX_HITS:
                    hits.append(f"{rel}:{number}: {line[:_LINE_CHARS]}")
    return hits, total


async def find(args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
    """Workspace-relative paths matching a glob (`*` within a name, `**` across directories).

    A pattern without `/` is matched against file names too, so `*.py` finds them at any depth.
    """
    pattern = arg_str(args, "pattern")
    if not pattern:
        raise ArgumentError("pattern must not be empty")
    matcher = _glob(pattern)
    found = []
    for path in ctx.workspace.walk_files():
        rel = ctx.workspace.relative(path)
        if (
            matcher.fullmatch(rel) or ("/" not in pattern and matcher.fullmatch(path.name))
        ) and ctx.visible(rel):
            found.append(rel)
    if not found:
        return ToolResult(f'[find "{pattern}"] no matches')
    more = f"\n({len(found) - MAX_FOUND} more not shown)" if len(found) > MAX_FOUND else ""
    return ToolResult(
        f'[find "{pattern}"] {len(found)} files\n' + "\n".join(found[:MAX_FOUND]) + more
    )


def _matching(ctx: ToolContext, pattern: str) -> list[str]:
    matcher = _glob(pattern)
    found = []
    for path in ctx.workspace.walk_files():
        rel = ctx.workspace.relative(path)
        named = matcher.fullmatch(rel) or ("/" not in pattern and matcher.fullmatch(path.name))
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

"""grep and find over the workspace; files the policy denies for reading are never revealed."""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from functools import lru_cache
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from ioh_tui.core.acts import Act
from ioh_tui.tools.base import ArgumentError, ToolContext, ToolResult, arg_bool, arg_str
from ioh_tui.tools.beneath import TooLarge, locate, names, open_in, read_fd, walk_files
from ioh_tui.tools.files import MAX_READ_BYTES, decode_text

MAX_HITS = 50
MAX_FOUND = 200
_LINE_CHARS = 300
REGEX_TIMEOUT_S = 10.0
"""How long a regex grep may match before its worker is killed."""


async def grep(args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
    """Lines containing `pattern` (a substring, or a regex with `regex: true`)."""
    pattern = arg_str(args, "pattern")
    if not pattern:
        raise ArgumentError("pattern must not be empty")
    rel_start = ctx.workspace.normalise(arg_str(args, "path", required=False))
    if arg_bool(args, "regex"):
        try:
            compiled = re.compile(pattern)
        except (re.error, RecursionError, OverflowError) as exc:
            return ToolResult(
                f'[grep "{pattern}" error] not a valid regular expression: {exc}', ok=False
            )
        # A regex can backtrack for ever (`(a+)+$`): matched in a worker that is killed at the
        # limit; the files are still read here, where the policy is.
        scanned = await asyncio.to_thread(_regex_scan, ctx, rel_start, compiled)
        if scanned is None:
            return ToolResult(
                f'[grep "{pattern}" error] the regular expression ran past '
                f"{REGEX_TIMEOUT_S:g} s and was stopped (catastrophic backtracking?); "
                "simplify it or search for a plain substring",
                ok=False,
            )
        hits, total = scanned
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
                with contextlib.suppress(OSError):
                    yield from _content(ctx, rel, open_in(spot), real=base)
            return
        for name, dir_fd, leaf in walk_files(spot):
            shown = f"{base}/{name}" if base else name
            if not _readable(ctx, shown):
                continue
            try:
                fd = os.open(leaf, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=dir_fd)
            except OSError:
                continue
            yield from _content(ctx, shown, fd)


def _content(
    ctx: ToolContext, shown: str, fd: int, real: str | None = None
) -> Iterator[tuple[str, bytes]]:
    """The file's bytes through `fd` (closed after), unless it cannot be read or has other names.

    A file with other names (hard links) is searched only where `read_file` would read it (the
    policy is asked about its symlink-resolved path `real`, as `read_file` asks).
    """
    try:
        if ctx.linked(Act.READ, real or shown, names(fd), "grep") is None:
            yield shown, read_fd(fd, MAX_READ_BYTES)
    except (OSError, TooLarge):
        return
    finally:
        os.close(fd)


def _readable(ctx: ToolContext, rel: str) -> bool:
    """Whether grep may show this file's content: shown by the policy and readable unasked."""
    return ctx.visible(rel) and (ctx.readable is None or ctx.readable(rel))


def _scan(ctx: ToolContext, rel: str, hit: Callable[[str], object]) -> tuple[list[str], int]:
    """Matching lines (the first `MAX_HITS`) and how many there are in all."""
    return _match(_texts(ctx, rel), hit)


def _texts(ctx: ToolContext, rel: str) -> Iterator[tuple[str, str]]:
    for shown, data in _files(ctx, rel):
        yield shown, decode_text(Path(shown), data) or ""


def _match(texts: Iterable[tuple[str, str]], hit: Callable[[str], object]) -> tuple[list[str], int]:
    hits: list[str] = []
    total = 0
    for shown, text in texts:
        for number, line in enumerate(text.splitlines(), 1):
            if hit(line):
                total += 1
                if len(hits) < MAX_HITS:
                    hits.append(f"{shown}:{number}: {line[:_LINE_CHARS]}")
    return hits, total


def _regex_scan(
    ctx: ToolContext, rel: str, compiled: re.Pattern[str]
) -> tuple[list[str], int] | None:
    """`_scan` with the matching in a forked worker, killed after `REGEX_TIMEOUT_S` (None)."""
    texts = list(_texts(ctx, rel))
    fork = multiprocessing.get_context("fork")
    receive, send = fork.Pipe(duplex=False)
    worker = fork.Process(target=_regex_worker, args=(texts, compiled, send), daemon=True)
    worker.start()
    send.close()
    try:
        if not receive.poll(REGEX_TIMEOUT_S):
            return None
        found: tuple[list[str], int] = receive.recv()
        return found
    except EOFError:  # the worker died (out of memory): as good as timed out
        return None
    finally:
        receive.close()
        if worker.is_alive():
            worker.kill()
        worker.join()


def _regex_worker(
    texts: list[tuple[str, str]], compiled: re.Pattern[str], send: Connection
) -> None:
    send.send(_match(texts, compiled.search))
    send.close()


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

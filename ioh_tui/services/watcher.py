"""Live workspace changes: which files changed since the run began, each with its diff.

watchfiles reports paths as they change (whoever changed them: a tool, a command, a person); the
watcher diffs each against the text it had when watching began, so the app can show every file the
run touched with what changed in it. A file that goes back to its baseline is reported once more,
as `unchanged`, so a view can drop it.
"""

from __future__ import annotations

import asyncio
import difflib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import watchfiles

from ioh_tui.tools.workspace import SKIP_DIRS

MAX_TRACKED_BYTES = 1_000_000
"""Files larger than this are reported without a diff."""
NOISE_DIRS = frozenset({"__pycache__"})
"""Directories of byproducts (bytecode) that every Python command rewrites: not the run's edits."""
IDLE_MS = 500
"""How long the watch thread waits before checking in: the first check-in triggers the catch-up
pass, and it bounds how long stopping takes (a watch cannot be cancelled mid-wait)."""

ChangeKind = Literal["created", "modified", "deleted", "unchanged"]


@dataclass(frozen=True, slots=True)
class FileChange:
    """One file's state against the baseline."""

    path: str
    """Relative to the workspace root."""
    kind: ChangeKind
    """`unchanged`: the file is back to its baseline (only reported for a file reported before)."""
    diff: str
    """A unified diff against the baseline ("" for binary or large files)."""


class WorkspaceWatcher:
    """Watches a workspace and yields `FileChange`s against the state it started from."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self._baseline: dict[str, str | None] = {}
        self._stamps: dict[str, tuple[int, int]] = {}
        """Size and mtime of each baseline file: how a binary or large file is compared."""
        self._reported: set[str] = set()

    def snapshot(self) -> None:
        """Record the baseline: the text of every file now (skipping tool directories)."""
        files = self._files()
        self._baseline = {rel: _text(self.root / rel) for rel in files}
        self._stamps = {rel: _stamp(self.root / rel) for rel in files}
        self._reported = set()

    async def changes(self, stop: asyncio.Event | None = None) -> AsyncIterator[list[FileChange]]:
        """Batches of changes as they happen, until `stop` is set.

        Setting `stop` ends the watch with one last full pass, so a change made just before it
        (still inside the debounce window) is reported too; cancelling ends it without one.
        """
        await asyncio.to_thread(self.snapshot)
        caught_up = False
        async for batch in watchfiles.awatch(
            self.root,
            stop_event=stop,
            watch_filter=self._wanted,
            debounce=200,
            step=50,
            rust_timeout=IDLE_MS,
            yield_on_timeout=True,
        ):
            paths = {Path(p) for _, p in batch}
            if not caught_up:
                # The watch starts only after the baseline is taken: one full pass, once the
                # watch is surely running, catches whatever changed in between.
                caught_up = True
                paths |= await asyncio.to_thread(self._everything)
            if not paths:
                continue
            changes = await asyncio.to_thread(self._describe, sorted(paths))
            if changes:
                yield changes
        last = await asyncio.to_thread(lambda: self._describe(sorted(self._everything())))
        if last:
            yield last

    def _files(self) -> list[str]:
        return [
            rel.as_posix()
            for path in self.root.rglob("*")
            if self._kept(rel := path.relative_to(self.root)) and path.is_file()
        ]

    def _everything(self) -> set[Path]:
        return {self.root / rel for rel in {*self._files(), *self._baseline}}

    def _kept(self, rel: Path) -> bool:
        return not any(
            part in SKIP_DIRS or part in NOISE_DIRS for part in rel.parts
        ) and not rel.name.endswith(".tmp")

    def _wanted(self, change: watchfiles.Change, path: str) -> bool:
        try:
            rel = Path(path).resolve().relative_to(self.root)
        except ValueError:
            return False
        return self._kept(rel)

    def _describe(self, paths: list[Path]) -> list[FileChange]:
        out = []
        for path in paths:
            try:
                rel = path.relative_to(self.root).as_posix()
            except ValueError:  # watchfiles gave a path by another spelling of the root
                continue
            if path.is_dir():
                continue
            change = self._compare(rel, path)
            if change is None:
                if rel in self._reported:
                    self._reported.discard(rel)
                    out.append(FileChange(rel, "unchanged", ""))
                continue
            self._reported.add(rel)
            out.append(change)
        return out

    def _compare(self, rel: str, path: Path) -> FileChange | None:
        """The file against its baseline; None when it is as it was."""
        before = self._baseline.get(rel)
        if not path.exists():
            if rel in self._baseline:
                return FileChange(rel, "deleted", _diff(rel, before, ""))
            return None
        after = _text(path)
        if rel in self._baseline and (
            after == before if after is not None else _stamp(path) == self._stamps.get(rel)
        ):
            return None
        kind: ChangeKind = "modified" if rel in self._baseline else "created"
        return FileChange(rel, kind, _diff(rel, before, after) if after is not None else "")


def _text(path: Path) -> str | None:
    try:
        if path.stat().st_size > MAX_TRACKED_BYTES:
            return None
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _stamp(path: Path) -> tuple[int, int]:
    try:
        stat = path.stat()
    except OSError:
        return (-1, -1)
    return (stat.st_size, stat.st_mtime_ns)


def _diff(rel: str, before: str | None, after: str) -> str:
    lines = difflib.unified_diff(
        (before or "").splitlines(keepends=True),
        after.splitlines(keepends=True),
        f"a/{rel}" if before is not None else "/dev/null",
        f"b/{rel}",
    )
    return "".join(lines)

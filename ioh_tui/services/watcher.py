"""Live workspace changes: which files changed since the run began, each with its diff.

watchfiles reports paths as they change (whoever changed them: a tool, a command, a person); the
watcher diffs each against the text it had when watching began, so the app can show every file the
run touched with what changed in it.
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


@dataclass(frozen=True, slots=True)
class FileChange:
    """One file's state against the baseline."""

    path: str
    """Relative to the workspace root."""
    kind: Literal["created", "modified", "deleted"]
    diff: str
    """A unified diff against the baseline ("" for binary or large files)."""


class WorkspaceWatcher:
    """Watches a workspace and yields `FileChange`s against the state it started from."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self._baseline: dict[str, str | None] = {}

    def snapshot(self) -> None:
        """Record the baseline: the text of every file now (skipping tool directories)."""
        self._baseline = {}
        for path in self.root.rglob("*"):
            rel = path.relative_to(self.root)
            if any(part in SKIP_DIRS for part in rel.parts) or not path.is_file():
                continue
            self._baseline[rel.as_posix()] = _text(path)

    async def changes(self, stop: asyncio.Event | None = None) -> AsyncIterator[list[FileChange]]:
        """Batches of changes as they happen, until `stop` is set."""
        await asyncio.to_thread(self.snapshot)
        async for batch in watchfiles.awatch(
            self.root, stop_event=stop, watch_filter=self._wanted, debounce=200, step=50
        ):
            paths = sorted({Path(p) for _, p in batch})
            changes = await asyncio.to_thread(self._describe, paths)
            if changes:
                yield changes

    def _wanted(self, change: watchfiles.Change, path: str) -> bool:
        try:
            rel = Path(path).resolve().relative_to(self.root)
        except ValueError:
            return False
        return not any(part in SKIP_DIRS for part in rel.parts) and not rel.name.endswith(".tmp")

    def _describe(self, paths: list[Path]) -> list[FileChange]:
        out = []
        for path in paths:
            rel = path.resolve().relative_to(self.root).as_posix()
            if path.is_dir():
                continue
            before = self._baseline.get(rel)
            if not path.exists():
                if rel in self._baseline:
                    out.append(FileChange(rel, "deleted", _diff(rel, before, "")))
                continue
            after = _text(path)
            kind: Literal["created", "modified"] = (
                "modified" if rel in self._baseline else "created"
            )
            if after is not None and after == before:
                continue
            out.append(
                FileChange(rel, kind, _diff(rel, before, after) if after is not None else "")
            )
        return out


def _text(path: Path) -> str | None:
    try:
        if path.stat().st_size > MAX_TRACKED_BYTES:
            return None
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _diff(rel: str, before: str | None, after: str) -> str:
    lines = difflib.unified_diff(
        (before or "").splitlines(keepends=True),
        after.splitlines(keepends=True),
        f"a/{rel}" if before is not None else "/dev/null",
        f"b/{rel}",
    )
    return "".join(lines)

"""FileChanges: the files the run changed (added, modified, deleted; +/- lines) and their diffs.

A watch worker follows the workspace (`services.WorkspaceWatcher`) from when the run's workspace is
known until the run ends (changes after it are not the run's); each batch the watcher yields (it
debounces the filesystem's bursts) is one update of the list. The highlighted file's diff shows
beside the list.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.coordinate import Coordinate
from textual.widget import Widget
from textual.widgets import DataTable, Static
from textual.worker import Worker, WorkerState

from ioh_tui.services import FileChange, WorkspaceWatcher
from ioh_tui.tui.describe import visible
from ioh_tui.tui.widgets.diff_view import DiffView

WATCH_GROUP = "workspace"
"""The worker group of the workspace watch."""

KINDS: dict[str, tuple[str, str]] = {
    "created": ("A", "added"),
    "modified": ("M", "modified"),
    "deleted": ("D", "deleted"),
}
"""A letter and a word per kind of change (as git writes them), so kinds read without colour."""


def line_counts(diff: str) -> tuple[int, int]:
    """Lines added and removed by a unified diff (its `---`/`+++` header lines not counted)."""
    added = removed = 0
    for line in diff.splitlines():
        if line.startswith("+") and not line.startswith("+++"):
            added += 1
        elif line.startswith("-") and not line.startswith("---"):
            removed += 1
    return added, removed


class FileChanges(Widget):
    """The run's changed files; the highlighted one's diff beside them."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, classes="-empty")
        self.changes: dict[str, FileChange] = {}
        """Every file that differs from the run's start, by workspace-relative path."""
        self.shown: str | None = None
        """The file whose diff is on screen."""
        self._stop = asyncio.Event()
        self._gone = False
        self._shown_diff: str | None = None
        # The list's highlight handler and the watch both redraw the diff; one at a time, or a
        # stale diff can be mounted after a newer redraw emptied the pane.
        self._drawing = asyncio.Lock()

    def compose(self) -> ComposeResult:
        """The list, its empty state, and the diff pane."""
        yield Static("no file changed yet", classes="file-changes--empty", markup=False)
        table: DataTable[str | Text] = DataTable(
            id="file-list", cursor_type="row", zebra_stripes=False
        )
        # The kind comes last: on a narrow screen it is what gets cut, and the lines say a lot.
        table.add_column("file", key="path")
        table.add_column("lines", key="lines")
        table.add_column("change", key="kind")
        yield table
        yield Vertical(id="file-diff")

    def on_mount(self) -> None:
        """Titled and empty until a file changes."""
        self._title()

    def on_unmount(self) -> None:
        """Stop the watch (a watch thread only notices the stop at its next check-in)."""
        self._gone = True
        self._stop.set()

    def watch_workspace(self, root: Path, until: asyncio.Future[Any] | None = None) -> Worker[None]:
        """Follow `root` from now on: its state now is the baseline the diffs are against.

        Args:
            root: The run's workspace.
            until: The run; the watch ends (after a last full pass) when it is done.
        """
        if until is not None:
            until.add_done_callback(lambda _: self._stop.set())
        return self.run_worker(
            self._follow(WorkspaceWatcher(root)),
            name="workspace-watch",
            group=WATCH_GROUP,
            description=f"watch {root.name} for changes",
            exit_on_error=False,
            exclusive=True,
        )

    async def _follow(self, watcher: WorkspaceWatcher) -> None:
        async for batch in watcher.changes(self._stop):
            if self._gone:
                return
            if not watcher.root.is_dir():
                # The workspace was removed (the demo's, as its run ended): that is not the run's
                # change, and what the run changed was read before (the pane keeps it).
                return
            await self.apply(batch)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A failed watch is a notice, not a crash: the run goes on without the pane."""
        if event.worker.group == WATCH_GROUP and event.state == WorkerState.ERROR:
            self.notify(f"Workspace changes stopped: {event.worker.error}", severity="warning")
            event.stop()

    async def apply(self, batch: Iterable[FileChange]) -> None:
        """One batch of changes: update the affected rows, then the diff if its file changed."""
        table = self.query_one("#file-list", DataTable)
        for change in batch:
            present = change.path in self.changes
            if change.kind == "unchanged":
                if present:
                    del self.changes[change.path]
                    table.remove_row(change.path)
                continue
            self.changes[change.path] = change
            letter, word = KINDS[change.kind]
            cells = (change.path, _counts(change), Text(f"{letter} {word}"))
            if present:
                for column, cell in zip(("path", "lines", "kind"), cells, strict=True):
                    table.update_cell(change.path, column, cell)
            else:
                table.add_row(*cells, key=change.path)
        table.sort("path")
        self.set_class(not self.changes, "-empty")
        self._title()
        await self._show_highlighted()

    def _title(self) -> None:
        count = len(self.changes)
        self.border_title = f"workspace changes · {count} file{'' if count == 1 else 's'}"

    async def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        """Moving along the list shows each file's diff."""
        event.stop()
        await self._show_highlighted()

    async def _show_highlighted(self) -> None:
        async with self._drawing:
            await self._draw()

    async def _draw(self) -> None:
        table = self.query_one("#file-list", DataTable)
        path: str | None = None
        if table.row_count:
            key = table.coordinate_to_cell_key(
                Coordinate(min(table.cursor_row, table.row_count - 1), 0)
            )
            path = key.row_key.value
        change = self.changes.get(path) if path is not None else None
        diff = change.diff if change is not None else None
        if (path, diff) == (self.shown, self._shown_diff):
            return
        self.shown, self._shown_diff = path, diff
        pane = self.query_one("#file-diff", Vertical)
        await pane.remove_children()
        if change is None:
            return
        if change.diff:
            body, _ = visible(change.diff)
            await pane.mount(DiffView(body, "diff"))
        else:
            await pane.mount(
                Static(f"{change.path}: binary or too large to show", classes="file-changes--note")
            )


def _counts(change: FileChange) -> Text:
    if not change.diff:
        return Text("binary", style="dim")
    added, removed = line_counts(change.diff)
    return Text.assemble((f"+{added}", "green"), " ", (f"-{removed}", "red"))

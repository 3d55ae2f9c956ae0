"""RunBrowserScreen: every run in the store, newest first, filtered by text and by state."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, cast

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import DataTable, Input, Select, Static

from ioh_tui.core.errors import IohError
from ioh_tui.store import ApprovalRow, Store
from ioh_tui.store.db import RunRow
from ioh_tui.tui.cells import fill
from ioh_tui.tui.describe import money, one_line, tokens
from ioh_tui.tui.history import (
    STATUS_FILTERS,
    StatusFilter,
    in_group,
    matches,
    run_state,
    started,
)
from ioh_tui.tui.screens.answer import answer_stored
from ioh_tui.tui.screens.trace import TraceScreen
from ioh_tui.tui.styles import stylesheet
from ioh_tui.tui.widgets.key_bar import KeyBar

if TYPE_CHECKING:
    from ioh_tui.tui.app import IohApp

LIMIT = 1000
"""The most runs read at once (newest first)."""
COLUMNS = ("run", "goal", "state", "steps", "tokens", "cost", "started (UTC)")


class RunBrowserScreen(Screen[None]):
    """Root runs (sub-agents are reached from their root's trace) with filters and actions."""

    CSS_PATH = stylesheet("runs")
    AUTO_FOCUS = "#runs-table"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back", tooltip="Leave the filter field; else go back"),
        Binding("slash", "filter", "Filter", tooltip="Type to filter by goal, id or state"),
        Binding("f", "cycle_status", "State", tooltip="Cycle the state filter"),
        Binding("r", "resume", "Resume", tooltip="Resume the selected run (paused or crashed)"),
        Binding("a", "answer", "Answer", tooltip="Answer the selected run's pending decision"),
        Binding("ctrl+r", "refresh", "Refresh", show=False, tooltip="Read the store again"),
    ]
    """Keys of the run browser (enter opens the selected run's trace)."""

    def __init__(self, store_path: Path) -> None:
        super().__init__()
        self.store_path = store_path
        """The store the runs come from."""
        self.runs: list[RunRow] = []
        """Every root run read, newest first."""
        self.states: dict[int, str] = {}
        """Each run's state (`history.run_state`)."""
        self.costs: dict[int, float] = {}
        """Each run's cost, when known."""
        self.pending: dict[int, list[ApprovalRow]] = {}
        """Pending decision requests per run."""
        self.shown: list[RunRow] = []
        """The runs passing the filters, in table order."""
        self._loaded = False

    def compose(self) -> ComposeResult:
        """Filters over the table."""
        yield Static("Runs", id="runs-title")
        with Horizontal(id="runs-filters"):
            yield Input(placeholder="/ filter: goal, run id or state", id="runs-filter")
            yield Select(
                [(f"state: {name}", name) for name in STATUS_FILTERS],
                value="all",
                allow_blank=False,
                id="runs-status",
            )
        yield DataTable(id="runs-table", cursor_type="row", zebra_stripes=True)
        yield Static("", id="runs-count", markup=False)
        yield KeyBar()

    def on_mount(self) -> None:
        """Set up the table and read the store."""
        self.query_one("#runs-table", DataTable).add_columns(*COLUMNS)
        self.action_refresh()

    def on_screen_resume(self) -> None:
        """Back from a trace or a run: read the store again (states may have changed)."""
        if self._loaded:
            self.action_refresh()

    def action_refresh(self) -> None:
        """Read the store in a worker (the store is asyncio-native)."""
        self.run_worker(
            self._load(),
            group="runs",
            description="read the runs",
            exclusive=True,
            exit_on_error=False,
        )

    async def _load(self) -> None:
        runs: list[RunRow] = []
        driven: set[int] = set()
        pending: list[ApprovalRow] = []
        if self.store_path.exists():
            try:
                async with Store.open(self.store_path) as store:
                    runs = await store.runs(limit=LIMIT, roots_only=True)
                    driven = await store.driven_runs()
                    self.costs = await store.run_costs()
                    pending = await store.approvals(pending_only=True)
            except (IohError, sqlite3.Error) as exc:
                self.notify(f"Cannot read the store: {exc}", severity="error")
        self.runs = runs
        self.states = {run.id: run_state(run, driven) for run in runs}
        self.pending = {}
        for row in pending:
            self.pending.setdefault(int(row.run_id), []).append(row)
        self._loaded = True
        self._apply()

    @property
    def status_filter(self) -> StatusFilter:
        """The state filter chosen."""
        return cast(StatusFilter, self.query_one("#runs-status", Select).value)

    def _apply(self) -> None:
        """Show the runs passing both filters, keeping the cursor on the same run when it can."""
        text = self.query_one("#runs-filter", Input).value
        group = self.status_filter
        table: DataTable[Text] = self.query_one("#runs-table", DataTable)
        was = self.selected
        self.shown = [
            run
            for run in self.runs
            if in_group(self.states[run.id], group) and matches(run, self.states[run.id], text)
        ]
        rows = [
            (
                str(run.id),
                one_line(run.goal, 48),
                self.states[run.id],
                str(run.steps),
                tokens(run.tokens),
                money(self.costs[run.id]) if run.id in self.costs else "—",
                started(run.started_at),
            )
            for run in self.shown
        ]
        empty = "no runs yet" if not self.runs else "no run matches the filters"
        fill(table, rows, empty=empty, keys=[str(run.id) for run in self.shown])
        if was is not None and was in self.shown:
            table.move_cursor(row=self.shown.index(was))
        total = len(self.runs)
        self.query_one("#runs-count", Static).update(
            f"{len(self.shown)} of {total} runs · enter trace · r resume · a answer · / filter"
            " · f state"
        )

    @property
    def selected(self) -> RunRow | None:
        """The run under the cursor, if any."""
        if not self.shown:
            return None
        row = self.query_one("#runs-table", DataTable).cursor_row
        return self.shown[row] if 0 <= row < len(self.shown) else None

    @on(Input.Changed, "#runs-filter")
    @on(Select.Changed, "#runs-status")
    def _filters_changed(self) -> None:
        if self._loaded:
            self._apply()

    @on(Input.Submitted, "#runs-filter")
    def _filter_done(self) -> None:
        self.query_one("#runs-table", DataTable).focus()

    @on(DataTable.RowSelected, "#runs-table")
    def _open(self) -> None:
        run = self.selected
        if run is not None:
            self.app.push_screen(TraceScreen(self.store_path, run.id))

    def action_filter(self) -> None:
        """/: type a filter."""
        self.query_one("#runs-filter", Input).focus()

    def action_cycle_status(self) -> None:
        """f: the next state filter."""
        select = self.query_one("#runs-status", Select)
        at = STATUS_FILTERS.index(self.status_filter)
        select.value = STATUS_FILTERS[(at + 1) % len(STATUS_FILTERS)]

    @property
    def app_(self) -> IohApp:
        """The app, typed."""
        from ioh_tui.tui.app import IohApp

        assert isinstance(self.app, IohApp)
        return self.app

    def action_resume(self) -> None:
        """r: resume the selected run (the app says why when it cannot)."""
        run = self.selected
        if run is None:
            self.notify("No run is selected.", timeout=3)
            return
        self.app_.resume_run(run.id)

    def action_answer(self) -> None:
        """a: answer the selected run's pending decision (the run then resumes)."""
        run = self.selected
        if run is None:
            self.notify("No run is selected.", timeout=3)
            return
        waiting = self.pending.get(run.id)
        if not waiting:
            self.notify(f"Run {run.id} has no pending decision.", timeout=3)
            return
        answer_stored(self.app_, waiting[-1])

    def action_back(self) -> None:
        """esc: leave the filter field; else back to the start screen."""
        if self.focused is self.query_one("#runs-filter", Input):
            self.query_one("#runs-table", DataTable).focus()
            return
        self.dismiss(None)

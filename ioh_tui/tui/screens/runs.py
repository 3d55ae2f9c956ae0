"""RunBrowserScreen: every run in the store, newest first, filtered by text and by state.

A run that is going (here or in another process) opens as a live trace (`LiveTraceScreen`): read
from the store as it is written, never driven from here, its waiting decision answerable with `a`.
`StoreWatch` (`tui/store_watch.py`) tells the screens that the store was written without reading it.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import ClassVar, cast

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import DataTable, Input, Select, Static

from ioh_tui.core.errors import IohError
from ioh_tui.store import ApprovalRow
from ioh_tui.store.db import RunRow
from ioh_tui.tui.cells import fill
from ioh_tui.tui.describe import money, one_line, tokens
from ioh_tui.tui.history import (
    STATUS_FILTERS,
    Browse,
    History,
    StatusFilter,
    in_group,
    matches,
    started,
)
from ioh_tui.tui.messages import ResumeRequested
from ioh_tui.tui.screens.answer import answer_stored
from ioh_tui.tui.screens.queue import ask_live
from ioh_tui.tui.screens.trace import TraceScreen
from ioh_tui.tui.store_watch import WATCH_S, StoreWatch
from ioh_tui.tui.styles import stylesheet
from ioh_tui.tui.widgets.key_bar import KeyBar

LIMIT = 1000
"""The most runs read at once (newest first)."""
COLUMNS = ("run", "goal", "state", "steps", "tokens", "cost", "started (UTC)")


class LiveTraceScreen(TraceScreen):
    """A going run's trace, read from the store as it is written; `a` answers its decision.

    The run is never driven from here: a decision it waits on is answered through the store, as
    `ioh-tui resume RUN_ID --decide` does (approve or deny), and the process driving it goes on.
    A run that is no longer going (it paused) resumes here with the answer instead.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("a", "answer", "Answer", tooltip="Answer the decision this run waits on"),
    ]

    def __init__(self, history: History, run_id: int, *, remember_file: Path) -> None:
        """The trace of `run_id`, kept up to date."""
        super().__init__(history, run_id)
        self.remember_file = remember_file
        """The default file for a rule remembered while answering (a paused run's decision)."""
        self.store_watch = StoreWatch(history.path)
        """Tells that the store was written."""

    def on_mount(self) -> None:
        """Read the store, then again whenever it is written."""
        super().on_mount()
        self.set_interval(WATCH_S, self._look)

    def _look(self) -> None:
        # A read under way is let finish (a new one would cancel it): the next look catches up.
        reading = any(w.node is self and not w.is_finished for w in self.app.workers)
        if self.is_current and not reading and self.store_watch.due():
            self.action_refresh()

    def action_answer(self) -> None:
        """a: the decision modal for the request the run waits on (the newest pending one)."""
        pending = [a for a in self.trace.approvals if a.status == "pending"] if self.trace else []
        if self.trace is None or not pending:
            self.notify(f"Run {self.run_id} waits on no decision.", timeout=3)
            return
        if self.trace.state != "running":
            answer_stored(self, pending[-1], remember_file=self.remember_file)
            return
        ask_live(self, self.history, pending[-1], self.remember_file)


def open_trace(
    screen: Screen[None], history: History, run_id: int, state: str, *, remember_file: Path
) -> None:
    """Open a run's trace: a live one while it is going (`running`), else as stored."""
    if state == "running":
        screen.app.push_screen(LiveTraceScreen(history, run_id, remember_file=remember_file))
    else:
        screen.app.push_screen(TraceScreen(history, run_id))


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

    def __init__(self, history: History, *, remember_file: Path) -> None:
        super().__init__()
        self.history = history
        """Where the runs are read from."""
        self.remember_file = remember_file
        """The default file for a rule remembered while answering a decision."""
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
        try:
            browse = await self.history.browse(LIMIT)
        except (IohError, sqlite3.Error) as exc:
            self.notify(f"Cannot read the store: {exc}", severity="error")
            browse = Browse([], {}, self.costs, {})
        self.runs, self.states, self.costs = browse.runs, browse.states, browse.costs
        self.pending = browse.pending
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
            state = self.states.get(run.id, "")
            open_trace(self, self.history, run.id, state, remember_file=self.remember_file)

    def action_filter(self) -> None:
        """/: type a filter."""
        self.query_one("#runs-filter", Input).focus()

    def action_cycle_status(self) -> None:
        """f: the next state filter."""
        select = self.query_one("#runs-status", Select)
        at = STATUS_FILTERS.index(self.status_filter)
        select.value = STATUS_FILTERS[(at + 1) % len(STATUS_FILTERS)]

    def action_resume(self) -> None:
        """r: resume the selected run (the app says why when it cannot)."""
        run = self.selected
        if run is None:
            self.notify("No run is selected.", timeout=3)
            return
        self.post_message(ResumeRequested(run.id))

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
        answer_stored(self, waiting[-1], remember_file=self.remember_file)

    def action_back(self) -> None:
        """esc: leave the filter field; else back to the start screen."""
        if self.focused is self.query_one("#runs-filter", Input):
            self.query_one("#runs-table", DataTable).focus()
            return
        self.dismiss(None)

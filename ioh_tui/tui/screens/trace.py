"""TraceScreen: one stored run — steps and calls, decisions, gate attempts, usage, sub-agents."""

from __future__ import annotations

import sqlite3
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import DataTable, Static, TabbedContent, TabPane

from ioh_tui.core.errors import IohError
from ioh_tui.core.shown import shown
from ioh_tui.tui.cells import fill
from ioh_tui.tui.history import History, Trace
from ioh_tui.tui.messages import ResumeRequested
from ioh_tui.tui.styles import stylesheet
from ioh_tui.tui.traces import (
    child_rows,
    decision_rows,
    gate_rows,
    header,
    step_rows,
    usage_rows,
)
from ioh_tui.tui.widgets.key_bar import KeyBar

SECTIONS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("steps", "Steps", ("step", "call", "arguments", "result", "summary")),
    (
        "decisions",
        "Decisions",
        ("step", "act", "target", "answer", "by", "rule", "layer", "reason", "rules kept"),
    ),
    ("gate", "Gate", ("step", "result", "evidence")),
    ("usage", "Usage", ("step", "input", "output", "tokens", "cost", "model calls")),
    ("agents", "Sub-agents", ("run", "agent", "goal", "outcome", "steps", "tokens")),
)
"""Each tab: its id, its title and its table's columns."""

EMPTY = {
    "steps": "no committed step",
    "decisions": "no decision was asked or refused",
    "gate": "the criterion was never checked",
    "usage": "no model call",
    "agents": "no sub-agent",
}
"""What each table says when it has no rows."""


class TraceScreen(Screen[None]):
    """The trace of one run, read from the store."""

    CSS_PATH = stylesheet("trace")
    AUTO_FOCUS = "#trace-steps"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back", tooltip="Back to where you came from"),
        Binding("r", "resume", "Resume", tooltip="Resume this run (paused or crashed runs only)"),
        Binding("1", "section('steps')", "Steps", show=False),
        Binding("2", "section('decisions')", "Decisions", show=False),
        Binding("3", "section('gate')", "Gate", show=False),
        Binding("4", "section('usage')", "Usage", show=False),
        Binding("5", "section('agents')", "Sub-agents", show=False),
        Binding("ctrl+r", "refresh", "Refresh", show=False, tooltip="Read the store again"),
    ]
    """Keys of the trace view (enter on a sub-agent opens its trace)."""

    def __init__(self, history: History, run_id: int) -> None:
        super().__init__()
        self.history = history
        """Where the trace is read from."""
        self.run_id = run_id
        """The run shown."""
        self.trace: Trace | None = None
        """The trace, once read."""

    def compose(self) -> ComposeResult:
        """The header, then one tab per section."""
        with Vertical(id="trace-header"):
            yield Static(f"run {self.run_id}", id="trace-title", markup=False)
            yield Static("reading the store…", id="trace-facts", markup=False)
        with TabbedContent(id="trace-tabs"):
            for key, title, _ in SECTIONS:
                with TabPane(title, id=f"tab-{key}"):
                    yield DataTable(id=f"trace-{key}", cursor_type="row", zebra_stripes=True)
        yield KeyBar()

    def on_mount(self) -> None:
        """Set up the tables and read the store."""
        for key, _, columns in SECTIONS:
            self.query_one(f"#trace-{key}", DataTable).add_columns(*columns)
        self.action_refresh()

    def action_refresh(self) -> None:
        """Read the trace in a worker (the store is asyncio-native)."""
        self.run_worker(
            self._load(),
            group="trace",
            description=f"read run {self.run_id}",
            exclusive=True,
            exit_on_error=False,
        )

    async def _load(self) -> None:
        try:
            trace = await self.history.trace(self.run_id)
        except (IohError, sqlite3.Error) as exc:
            self._missing(str(exc))
            return
        self._show(trace)

    def _missing(self, why: str) -> None:
        self.query_one("#trace-facts", Static).update(shown(why))

    def _show(self, trace: Trace) -> None:
        self.trace = trace
        title, *facts = header(trace)
        self.query_one("#trace-title", Static).update(title)
        self.query_one("#trace-facts", Static).update("\n".join(facts))
        self.set_class(trace.state == "success", "-success")
        rows = {
            "steps": step_rows(trace),
            "decisions": decision_rows(trace),
            "gate": gate_rows(trace),
            "usage": usage_rows(trace) if trace.steps else [],
            "agents": child_rows(trace),
        }
        tabs = self.query_one(TabbedContent)
        for key, title, _ in SECTIONS:
            table: DataTable[Text] = self.query_one(f"#trace-{key}", DataTable)
            keys = [str(c.id) for c in trace.children] if key == "agents" else ()
            fill(table, rows[key], empty=EMPTY[key], keys=keys)
            count = len(trace.children) if key == "agents" else len(rows[key])
            if key == "steps":
                count = len(trace.steps)
            elif key == "usage":
                count = len(trace.provider_calls)
            tabs.get_tab(f"tab-{key}").label = f"{title} ({count})"

    def action_section(self, key: str) -> None:
        """1–5: show one section and put the cursor in its table."""
        self.query_one(TabbedContent).active = f"tab-{key}"
        self.query_one(f"#trace-{key}", DataTable).focus()

    @on(DataTable.RowSelected, "#trace-agents")
    def _open_child(self, event: DataTable.RowSelected) -> None:
        key = event.row_key.value
        if key is not None:
            self.app.push_screen(TraceScreen(self.history, int(key)))

    def action_resume(self) -> None:
        """r: resume this run in the app (the app says why when it cannot)."""
        self.post_message(ResumeRequested(self.run_id))

    def action_back(self) -> None:
        """esc: back to the list (or the trace) this one was opened from."""
        self.dismiss(None)

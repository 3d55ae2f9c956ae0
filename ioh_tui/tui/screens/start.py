"""StartScreen: pending decisions and recent runs from the store, and how to start a run.

Enter on a decision answers it (the run then resumes); enter on a run opens its trace; `b` opens
the run browser over every run. When MCP servers are configured, a panel lists them: each is
started in the sandbox, its tools counted, and stopped again (`r` looks again).
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Static

from ioh_tui.core.errors import IohError
from ioh_tui.mcp import Lister, ServerRow
from ioh_tui.store import ApprovalRow
from ioh_tui.store.db import RunRow
from ioh_tui.tui.cells import fill
from ioh_tui.tui.describe import one_line
from ioh_tui.tui.history import Front, History, started
from ioh_tui.tui.messages import DemoRequested
from ioh_tui.tui.screens.answer import answer_stored
from ioh_tui.tui.screens.runs import RunBrowserScreen
from ioh_tui.tui.screens.trace import TraceScreen
from ioh_tui.tui.styles import stylesheet
from ioh_tui.tui.widgets.key_bar import KeyBar

RECENT = 10
"""How many recent runs are listed."""

PROVIDER_ENV = (
    ("OpenRouter", "OPENROUTER_API_KEY", "OPENROUTER_MODEL"),
    ("Anthropic", "ANTHROPIC_API_KEY", "ANTHROPIC_MODEL"),
    ("OpenAI", "OPENAI_API_KEY", "OPENAI_MODEL"),
)
"""The environment variables a model is configured with (interface.md §1)."""

HOW_TO_RUN = (
    'Start a run:  ioh-tui run "GOAL" --workspace DIR --verify-cmd "pytest -q"\n'
    "Resume one:   ioh-tui resume RUN_ID   (add --decide approve|deny for a pending decision)"
)


def configured_provider() -> str | None:
    """Which provider the environment configures (never its key), or None."""
    for name, key, model in PROVIDER_ENV:
        if os.environ.get(key) and os.environ.get(model):
            return f"{name} · {os.environ[model]}"
    return None


def setup_hint() -> str:
    """How to configure a model, when none is."""
    pairs = ", ".join(f"{key} + {model}" for _, key, model in PROVIDER_ENV)
    return f"No model is configured. Set one of: {pairs}."


class StartScreen(Screen[None]):
    """The first screen when `ioh-tui` is opened without a command."""

    CSS_PATH = stylesheet("start")
    AUTO_FOCUS = "#start-pending"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "d",
            "demo",
            "Demo",
            tooltip="Start the built-in demo (scripted model, no key, no network)",
        ),
        Binding("b", "browse", "Browse runs", tooltip="Every run: filter, open a trace, resume"),
        Binding("w", "app.queue", "Queue", tooltip="Every decision waiting on you, in one list"),
        Binding("r", "refresh", "Refresh", tooltip="Read the store again"),
        Binding("q", "app.quit", "Quit"),
    ]
    """Keys of the start screen (enter answers a decision, or opens a run's trace)."""

    def __init__(
        self,
        history: History,
        *,
        remember_file: Path,
        demo_available: bool,
        servers: Lister | None = None,
    ) -> None:
        super().__init__()
        self.servers = servers
        """Lists the configured MCP servers (None: none are configured)."""
        self.server_rows: list[ServerRow] = []
        """The servers as last listed."""
        self.history = history
        """Where the lists are read from."""
        self.remember_file = remember_file
        """The default file for a rule remembered while answering a decision."""
        self.demo_available = demo_available
        """Whether this build has the demo."""
        self.pending: list[ApprovalRow] = []
        """Pending (deferred) decisions, as read."""
        self.recent: list[RunRow] = []
        """Recent root runs, newest first, as read."""
        self._loaded = False

    def compose(self) -> ComposeResult:
        """Model setup, pending decisions, recent runs, and how to start."""
        provider = configured_provider()
        with VerticalScroll(id="start-body"):
            yield Static("ioh-tui — supervise AI coding agents", id="start-title")
            if provider:
                yield Static(f"Model: {provider}", id="start-model", markup=False)
            else:
                yield Static(setup_hint(), id="start-model", classes="-missing", markup=False)
            if self.demo_available:
                yield Static(
                    "Press d for the demo: a scripted demo model fixing a failing test.",
                    id="start-demo",
                )
            yield Static("Pending decisions — enter answers one", classes="start-heading")
            yield DataTable(id="start-pending", cursor_type="row", zebra_stripes=True)
            yield Static(
                "Recent runs — enter opens a trace · b browses every run", classes="start-heading"
            )
            yield DataTable(id="start-runs", cursor_type="row", zebra_stripes=True)
            if self.servers is not None:
                yield Static("MCP servers — started to list their tools", classes="start-heading")
                yield DataTable(id="start-mcp", cursor_type="row", zebra_stripes=True)
            yield Static(HOW_TO_RUN, id="start-how", markup=False)
        yield KeyBar()

    def on_mount(self) -> None:
        """Set up the tables and read the store."""
        pending = self.query_one("#start-pending", DataTable)
        pending.add_columns("run", "request", "act", "target", "agent", "goal")
        runs = self.query_one("#start-runs", DataTable)
        runs.add_columns("run", "goal", "outcome", "steps", "tokens", "started")
        if self.servers is not None:
            servers = self.query_one("#start-mcp", DataTable)
            servers.add_columns("server", "kind", "state", "tools", "command or URL")
            fill(servers, (), empty="starting the servers…")
        self.action_refresh()

    def on_screen_resume(self) -> None:
        """Back from the browser, a trace or an answer: read the store again."""
        if self._loaded:
            self.action_refresh()

    def action_refresh(self) -> None:
        """Read the store in a worker (the store is asyncio-native)."""
        self.run_worker(
            self._load(),
            group="start",
            description="read the store",
            exclusive=True,
            exit_on_error=False,
        )
        if self.servers is not None:
            self.run_worker(
                self._list_servers(self.servers),
                group="start-mcp",
                description="list the MCP servers",
                exclusive=True,
                exit_on_error=False,
            )

    async def _list_servers(self, servers: Lister) -> None:
        try:
            rows = await servers()
        except (IohError, OSError) as exc:
            self.notify(f"Cannot list the MCP servers: {exc}", severity="error")
            return
        self.server_rows = rows
        fill(
            self.query_one("#start-mcp", DataTable),
            (
                (
                    row.name,
                    row.kind,
                    row.state if row.error is None else one_line(f"{row.state}: {row.error}", 50),
                    str(len(row.tools)),
                    one_line(row.line, 50),
                )
                for row in rows
            ),
            empty="no MCP servers configured",
        )

    async def _load(self) -> None:
        try:
            front = await self.history.front(RECENT)
        except (IohError, sqlite3.Error) as exc:
            self.notify(f"Cannot read the store: {exc}", severity="error")
            front = Front([], [])
        self._fill(front.pending, front.recent)

    def _fill(self, pending: list[ApprovalRow], recent: list[RunRow]) -> None:
        self.pending, self.recent = pending, recent
        self._loaded = True
        table: DataTable[Text] = self.query_one("#start-pending", DataTable)
        fill(
            table,
            (
                (
                    str(row.run_id),
                    str(row.id),
                    row.act,
                    one_line(row.target, 40),
                    row.agent_label or "root",
                    one_line(row.goal or "", 40),
                )
                for row in pending
            ),
            empty="nothing is waiting on you",
        )
        runs: DataTable[Text] = self.query_one("#start-runs", DataTable)
        fill(
            runs,
            (
                (
                    str(run.id),
                    one_line(run.goal, 40),
                    run.outcome or run.status,
                    str(run.steps),
                    str(run.tokens),
                    started(run.started_at),
                )
                for run in recent
            ),
            empty="no runs yet",
        )

    @on(DataTable.RowSelected, "#start-pending")
    def _answer(self, event: DataTable.RowSelected) -> None:
        if 0 <= event.cursor_row < len(self.pending):
            answer_stored(self, self.pending[event.cursor_row], remember_file=self.remember_file)

    @on(DataTable.RowSelected, "#start-runs")
    def _trace(self, event: DataTable.RowSelected) -> None:
        if 0 <= event.cursor_row < len(self.recent):
            self.app.push_screen(TraceScreen(self.history, self.recent[event.cursor_row].id))

    def action_browse(self) -> None:
        """b: the run browser."""
        self.app.push_screen(RunBrowserScreen(self.history, remember_file=self.remember_file))

    def action_demo(self) -> None:
        """d: the demo, when this build has it."""
        if not self.demo_available:
            self.notify("The demo is not available in this build.", severity="warning")
            return
        self.post_message(DemoRequested())

"""StartScreen: pending decisions and every session at a glance, and how to start a run.

The runs of every process on the store are listed — waiting on you first, then running, then
paused or crashed, then the latest done — and the lists follow the store as it is written (its
files are looked at every `WATCH_S`, `store_watch.StoreWatch`). Enter on a decision answers it: a
paused run then resumes here; a run another process drives takes the answer through the store and
goes on. Enter on a run opens its trace, a live one while it is going (`runs.LiveTraceScreen`);
`b` opens the run browser over every run. When MCP servers are configured, a panel lists them: each
is started in the sandbox, its tools counted, and stopped again (`r` looks again).
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Static
from textual.worker import Worker

from ioh_tui.core.errors import IohError
from ioh_tui.tui.cells import fill
from ioh_tui.tui.describe import one_line
from ioh_tui.tui.history import PAUSED, Browse, History, StoredAsk, started
from ioh_tui.tui.messages import DemoRequested
from ioh_tui.tui.store_watch import WATCH_S, StoreWatch
from ioh_tui.tui.styles import stylesheet
from ioh_tui.tui.widgets.key_bar import KeyBar

if TYPE_CHECKING:
    # The app opens on this screen: what its keys open (answers, traces, the browser) and the
    # store's rows are imported when first used, after the first frame.
    from ioh_tui.mcp import Lister, ServerRow
    from ioh_tui.store import ApprovalRow
    from ioh_tui.store.db import RunRow

RECENT = 10
"""How many of the latest done runs are listed (every run not done is)."""
READ = 200
"""How many of the newest root runs are read to find those going, waiting or paused."""
WAITING = "waiting on you"
RANKS = {WAITING: 0, "running": 1, PAUSED: 2, "crashed": 2}
"""Where each kind of run is listed: lowest first; done runs last."""


def at_a_glance(browse: Browse, asks: list[StoredAsk]) -> list[tuple[RunRow, str]]:
    """The runs to list with their states: waiting on you, running, paused or crashed, done.

    A run is waiting on you while another process drives it and one of its agents waits on a
    decision; within a kind, the newest first; only the `RECENT` latest done runs.
    """
    waiting: dict[int, int] = {}
    for ask in asks:
        if ask.root_driven:
            waiting[ask.root] = waiting.get(ask.root, 0) + 1
    listed: list[tuple[RunRow, str]] = []
    done = 0
    for run in browse.runs:  # newest first
        state = browse.states[run.id]
        if state == "running" and run.id in waiting:
            state = f"{WAITING} ({waiting[run.id]})"
        elif state not in RANKS:
            done += 1
            if done > RECENT:
                continue
        listed.append((run, state))
    return sorted(listed, key=lambda pair: RANKS.get(pair[1].split(" (")[0], len(RANKS)))


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
        self.asks: list[StoredAsk] = []
        """Pending decisions, as read, each with where its run stands."""
        self.runs: list[tuple[RunRow, str]] = []
        """The root runs listed, with their states, in table order (`at_a_glance`)."""
        self.store_watch = StoreWatch(history.path)
        """Tells that the store was written (by any process)."""
        self._loaded = False
        self._reading: Worker[None] | None = None
        self._drawn: dict[str, list[tuple[str, ...]]] = {}

    @property
    def pending(self) -> list[ApprovalRow]:
        """Pending decisions across runs, as read."""
        return [ask.row for ask in self.asks]

    @property
    def recent(self) -> list[RunRow]:
        """The root runs listed, in table order."""
        return [run for run, _ in self.runs]

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
                "Runs — waiting on you first, then running, paused, done · enter opens one · "
                "b browses every run",
                classes="start-heading",
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
        runs.add_columns("run", "goal", "state", "steps", "tokens", "started")
        if self.servers is not None:
            servers = self.query_one("#start-mcp", DataTable)
            servers.add_columns("server", "kind", "state", "tools", "command or URL")
            fill(servers, (), empty="starting the servers…")
        # The store is read once the screen has been drawn: reading it imports the store.
        self.call_after_refresh(self.action_refresh)
        self.set_interval(WATCH_S, self._look)

    def _look(self) -> None:
        """Read the store again when any process wrote it (or every `REREAD_S` anyway)."""
        # A read under way is let finish (a new one would cancel it): the next look catches up.
        reading = self._reading is not None and not self._reading.is_finished
        if self.is_current and not reading and self.store_watch.due():
            self._read()

    def on_screen_resume(self) -> None:
        """Back from the browser, a trace or an answer: read the store again."""
        if self._loaded:
            self.action_refresh()

    def action_refresh(self) -> None:
        """Read the store in a worker (the store is asyncio-native)."""
        self._read()
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

    def _read(self) -> None:
        self._reading = self.run_worker(
            self._load(),
            group="start",
            description="read the store",
            exclusive=True,
            exit_on_error=False,
        )

    async def _load(self) -> None:
        try:
            asks = await self.history.asks()
            browse = await self.history.browse(READ)
        except (IohError, sqlite3.Error) as exc:
            self.notify(f"Cannot read the store: {exc}", severity="error")
            asks, browse = [], Browse([], {}, {}, {})
        self._fill(asks, at_a_glance(browse, asks))

    def _fill(self, asks: list[StoredAsk], runs: list[tuple[RunRow, str]]) -> None:
        self.asks, self.runs = asks, runs
        self._loaded = True
        table: DataTable[Text] = self.query_one("#start-pending", DataTable)
        self._refill(
            table,
            [
                (
                    str(row.run_id),
                    str(row.id),
                    row.act,
                    one_line(row.target, 40),
                    row.agent_label or "root",
                    one_line(row.goal or "", 40),
                )
                for row in self.pending
            ],
            empty="nothing is waiting on you",
        )
        listed: DataTable[Text] = self.query_one("#start-runs", DataTable)
        self._refill(
            listed,
            [
                (
                    str(run.id),
                    one_line(run.goal, 40),
                    state,
                    str(run.steps),
                    str(run.tokens),
                    started(run.started_at),
                )
                for run, state in runs
            ],
            empty="no runs yet",
        )

    def _refill(self, table: DataTable[Text], rows: list[tuple[str, ...]], *, empty: str) -> None:
        """`fill` when the rows changed, the cursor staying on its row.

        The lists are read again whenever the store changes: a read that finds them as they
        were leaves the table alone.
        """
        if self._drawn.get(str(table.id)) == rows:
            return
        self._drawn[str(table.id)] = rows
        at = table.cursor_row
        fill(table, rows, empty=empty)
        if at > 0:
            table.move_cursor(row=min(at, table.row_count - 1))

    @on(DataTable.RowSelected, "#start-pending")
    def _answer(self, event: DataTable.RowSelected) -> None:
        if not 0 <= event.cursor_row < len(self.asks):
            return
        from ioh_tui.tui.screens.answer import answer_stored
        from ioh_tui.tui.screens.queue import ask_live

        ask = self.asks[event.cursor_row]
        if not ask.root_driven:
            answer_stored(self, ask.row, remember_file=self.remember_file)
            return
        # Another process drives the run: the answer goes through the store, and it goes on.
        ask_live(self, self.history, ask.row, self.remember_file)

    @on(DataTable.RowSelected, "#start-runs")
    def _trace(self, event: DataTable.RowSelected) -> None:
        from ioh_tui.tui.screens.runs import open_trace

        if 0 <= event.cursor_row < len(self.runs):
            run, state = self.runs[event.cursor_row]
            live = "running" if state == "running" or state.startswith(WAITING) else state
            open_trace(self, self.history, run.id, live, remember_file=self.remember_file)

    def action_browse(self) -> None:
        """b: the run browser."""
        from ioh_tui.tui.screens.runs import RunBrowserScreen

        self.app.push_screen(RunBrowserScreen(self.history, remember_file=self.remember_file))

    def action_demo(self) -> None:
        """d: the demo, when this build has it."""
        if not self.demo_available:
            self.notify("The demo is not available in this build.", severity="warning")
            return
        self.post_message(DemoRequested())

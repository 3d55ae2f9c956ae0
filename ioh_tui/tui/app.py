"""IohApp: composition, app-wide keys, and the run worker that hosts the engine.

The engine runs as an async worker on the app's loop (it is asyncio-native: no thread needed).
Its events and asks reach the run screen as messages; the app only starts and stops the run,
keeps its result, and owns the terminal-wide signals (bell, title).

Slightly over 400 lines: starting, resuming and stopping runs share the run's state (the engine's
task, its stop switch, its raised budgets, its result), which reads best in one place.
"""

from __future__ import annotations

import asyncio
import gc
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePath
from typing import Any, ClassVar

from textual.app import App, SystemCommand
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.worker import Worker, WorkerState

from ioh_tui.core.errors import ConfigError
from ioh_tui.engine import BudgetRaises, CancelToken, RunResult
from ioh_tui.paths import data_dir
from ioh_tui.policy import Decision
from ioh_tui.tui.bridge import EventForwarder, PartsSource, RunPlan, TuiApprover, drive
from ioh_tui.tui.describe import visible
from ioh_tui.tui.notify import Style, sequence
from ioh_tui.tui.resuming import BudgetSpent, Resumer, ResumeRefused, resume_plan
from ioh_tui.tui.screens.approval import ApprovalModal
from ioh_tui.tui.screens.budget import BudgetAnswer, BudgetModal
from ioh_tui.tui.screens.help import HelpScreen
from ioh_tui.tui.screens.queue import DecisionQueueScreen
from ioh_tui.tui.screens.run import RunScreen
from ioh_tui.tui.screens.runs import RunBrowserScreen
from ioh_tui.tui.screens.start import StartScreen
from ioh_tui.tui.screens.trace import TraceScreen
from ioh_tui.tui.styles import stylesheet
from ioh_tui.tui.totals import Clock
from ioh_tui.tui.widgets.tool_call import ToolCall

CLOSE_GRACE_S = 5.0
"""How long closing the app waits for a stopped run to record its outcome."""
RUN_GROUP = "run"
"""The worker group of the one run an app supervises."""
GC_YOUNG = 10_000
"""Allocations between young garbage collections while the app runs (Python's default: 700)."""


@dataclass(slots=True)
class AppConfig:
    """How the app is built (see `factory.make_app`)."""

    store_path: Path
    plan: RunPlan | None = None
    """The run to supervise; None opens the start screen."""
    clock: Clock = time.monotonic
    remember_file: Path = field(default_factory=lambda: data_dir() / "policy.toml")
    """Where a remembered rule is saved by default (editable in the modal)."""
    demo: PartsSource | None = None
    """The demo's parts, when the demo is available (offered on the start screen)."""
    resumer: Resumer | None = None
    """Builds the parts that continue a stored run (None: runs cannot be resumed in the app)."""
    notify: Style | None = None
    """The desktop notification sequence for a waiting decision (`tui/notify.py`; None: none)."""


class IohApp(App[int]):
    """The supervision app."""

    CSS_PATH: ClassVar[list[str | PurePath]] = [stylesheet("base"), stylesheet("app")]
    TITLE = "ioh-tui"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "ctrl+c",
            "stop_or_quit",
            "Stop",
            priority=True,
            show=False,
            tooltip="Stop the run now (outcome cancelled); quit when no run is going",
        ),
        Binding("f1,question_mark", "help", "Help", tooltip="This list of keys"),
        Binding(
            "ctrl+q",
            "quit",
            "Quit",
            priority=True,
            show=False,
            tooltip="Quit (stops a running run)",
        ),
    ]
    """App-wide keys; ctrl+c is a priority binding so no focused widget can swallow it."""

    def __init__(self, config: AppConfig) -> None:
        super().__init__()
        self.config = config
        """How the app was built."""
        self.clock = config.clock
        """The time source (fixed in snapshots)."""
        self.cancel: CancelToken | None = None
        """The running run's stop switch."""
        self.raises: BudgetRaises | None = None
        """Where budgets raised mid-run wait for the engine to take them."""
        self.result: RunResult | None = None
        """How the run ended (set when its worker returns)."""
        self.error: BaseException | None = None
        """Why the run's worker failed, if it did."""
        self.run_screen: RunScreen | None = None
        """The run view, once a run was started."""
        self.engine: asyncio.Future[RunResult] | None = None
        """The engine's task (the run worker supervises it)."""
        self.bells = 0
        """Bells rung for decisions (tests read it; the terminal hears it)."""
        self.notified: list[str] = []
        """The desktop notifications asked of the terminal (tests read it)."""
        self.terminal_title = "ioh-tui"
        """The terminal window title last set."""
        self._pending: RunPlan | None = config.plan

    def on_mount(self) -> None:
        """Open the run view when there is a run to supervise, else the start screen.

        Pushed rather than returned from `get_default_screen`: Textual 8.2.8 does not load a
        default screen's own `CSS_PATH`, and each screen keeps its stylesheet beside it.
        """
        # Fewer, larger young collections: with the default (700) a 100-agent tree's screen set
        # off a full collection (about 0.1 s, a visible stall) every half second; measured with
        # benchmarks/bench_tui_tree.py: 32 full collections in an 18 s run, then one.
        gc.set_threshold(GC_YOUNG, 10, 10)
        if self._pending is not None:
            self.run_screen = RunScreen(clock=self.clock, remember_file=self.config.remember_file)
            self.push_screen(self.run_screen)
        else:
            self.push_screen(
                StartScreen(self.config.store_path, demo_available=self.config.demo is not None)
            )

    @property
    def running(self) -> bool:
        """Whether a run is being driven now."""
        return self.engine is not None and not self.engine.done()

    @property
    def exit_status(self) -> int:
        """The run's documented exit status (0 when no run was started; 2 for a bad setup)."""
        if self.result is not None:
            return self.result.exit_status
        if isinstance(self.error, ConfigError | ValueError):
            return 2
        return 1 if self.error is not None else 0

    def begin(self, screen: RunScreen) -> None:
        """Start the pending run once its screen is mounted (it must be able to take events)."""
        plan, self._pending = self._pending, None
        if plan is None:
            return
        self.run_screen = screen
        self.cancel = CancelToken()
        self.raises = BudgetRaises()
        # The engine runs in its own task, supervised by the worker: Textual cancels workers on
        # exit without waiting, and the engine must still get to record how the run ended.
        self.engine = asyncio.ensure_future(
            drive(
                plan,
                forwarder=EventForwarder(screen),
                approver=TuiApprover(screen),
                cancel=self.cancel,
                tell=screen.tell,
                raises=self.raises,
            )
        )
        self.run_worker(
            self._supervise(self.engine, self.cancel),
            name="engine",
            group=RUN_GROUP,
            description=f"{plan.mode} run",
            exit_on_error=False,
            exclusive=True,
        )

    async def _supervise(self, engine: asyncio.Future[RunResult], cancel: CancelToken) -> RunResult:
        """The run worker: wait for the engine; if the worker is cancelled, stop the run cleanly."""
        try:
            return await asyncio.shield(engine)
        except asyncio.CancelledError:
            cancel.cancel("the app was closed")
            raise

    def start(self, plan: RunPlan) -> None:
        """Open a fresh run view and drive `plan` in it (the demo, a resumed run).

        One run at a time: once the previous run has ended, its view stays below the new one and
        the app's result, error and exit status become the new run's.
        """
        if self.running or self._pending is not None:
            self.notify(
                "A run is going in this app: stop it (ctrl+c) or let it end first.",
                severity="warning",
            )
            return
        self._pending = plan
        self.result = self.error = self.engine = self.cancel = self.raises = None
        self.push_screen(RunScreen(clock=self.clock, remember_file=self.config.remember_file))

    def resume_run(
        self,
        run_id: int,
        decision: Decision | None = None,
        overrides: dict[str, Any] | None = None,
    ) -> None:
        """Continue a paused or crashed run in a fresh run view, answering its decision first.

        Refused, with a notification saying why, while a run is going here, when the run has
        finished or is driven elsewhere, or when no provider can be built for it.

        Args:
            run_id: The root run to resume.
            decision: The answer to its pending (deferred) decision; None asks it again.
            overrides: Raised budgets. A run stopped at its budget first offers to raise it.
        """
        if self.running or self._pending is not None:
            self.notify(
                f"A run is going in this app: run {run_id} can be resumed once it has ended.",
                severity="warning",
            )
            return
        if self.config.resumer is None:
            self.notify(
                f"This app cannot resume runs: use `ioh-tui resume {run_id}`.", severity="warning"
            )
            return
        self.run_worker(
            self._resume(run_id, decision, self.config.resumer, overrides),
            group="resume",
            description=f"resume run {run_id}",
            exclusive=True,
            exit_on_error=False,
        )

    async def _resume(
        self,
        run_id: int,
        decision: Decision | None,
        resumer: Resumer,
        overrides: dict[str, Any] | None,
    ) -> None:
        try:
            plan = await resume_plan(self.config.store_path, run_id, decision, resumer, overrides)
        except BudgetSpent as exc:
            # The offer a live run gets, before the resume: the new limit goes in as an override.
            spent = exc.budget

            def raised(answer: BudgetAnswer | None) -> None:
                if answer is not None and answer.choice == "raise" and answer.limit is not None:
                    self.resume_run(run_id, decision, {spent.name: answer.limit})

            self.push_screen(BudgetModal(spent, stopped=run_id), callback=raised)
            return
        except ResumeRefused as exc:
            self.notify(str(exc), severity="warning", timeout=8)
            return
        self.start(plan)

    def action_home(self) -> None:
        """Esc on an ended run view: back to the start screen, which is read again.

        The ended run views above it are closed (their runs are in the store: the run browser
        reopens their traces). Launched on a run, the app had no start screen: one is opened.
        """
        if self.running:
            return
        start = next((s for s in self.screen_stack if isinstance(s, StartScreen)), None)
        if start is None:
            self.push_screen(
                StartScreen(self.config.store_path, demo_available=self.config.demo is not None)
            )
            return
        while self.screen is not start:
            self.pop_screen()
        self.run_screen = None

    def action_browse(self) -> None:
        """Open the run browser (from the command palette)."""
        if not isinstance(self.screen, RunBrowserScreen):
            self.push_screen(RunBrowserScreen(self.config.store_path))

    def action_queue(self) -> None:
        """The decision queue: this app's waiting asks (if a run goes) and the stored ones."""
        if isinstance(self.screen, DecisionQueueScreen):
            return
        if self.run_screen is not None and self.running:
            self.run_screen.action_queue()
            return
        self.push_screen(
            DecisionQueueScreen(self.config.store_path, remember_file=self.config.remember_file)
        )

    def start_demo(self) -> None:
        """Drive the built-in demo (offered on the start screen)."""
        if self.config.demo is None:
            self.notify("The demo is not available in this build.", severity="warning")
            return
        self.start(RunPlan(self.config.store_path, "demo", self.config.demo))

    async def on_unmount(self) -> None:
        """Closing mid-run: stop the run and let the engine record `cancelled` before the loop ends.

        Without this wait, the engine's clean-up (recording the outcome, releasing the run's
        lease, draining the event log) would race the event loop's shutdown.
        """
        engine = self.engine
        if engine is None or engine.done():
            return
        if self.cancel is not None:
            self.cancel.cancel("the app was closed")
        await asyncio.wait({engine}, timeout=CLOSE_GRACE_S)
        if engine.done() and not engine.cancelled() and engine.exception() is None:
            self.result = engine.result()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """Keep the run's result; turn a crash into a visible error instead of a traceback."""
        worker = event.worker
        if worker.group != RUN_GROUP:
            return
        if event.state in (WorkerState.SUCCESS, WorkerState.ERROR, WorkerState.CANCELLED):
            self.refresh_bindings()
        if event.state == WorkerState.SUCCESS:
            self.result = worker.result
        elif event.state == WorkerState.ERROR:
            self.error = worker.error
            self.notify(
                f"The run stopped with an error: {worker.error}", severity="error", timeout=30
            )
            if self.run_screen is not None:
                self.run_screen.status.outcome = f"error: {worker.error}"
            self.no_longer_waiting()

    def run_ended(self, outcome: str) -> None:
        """The root run finished (its last event arrived)."""
        self.set_terminal_title(f"ioh-tui — {outcome}")
        self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Offer "stop" while a run goes and "quit" once it has ended (the footer follows)."""
        if action == "stop_run":
            return self.running
        if action in ("quit_when_idle", "home"):
            return not self.running
        return True

    def waiting_on_you(self, what: str) -> None:
        """A decision waits: ring the bell, say so in the terminal title, notify if asked to."""
        self.bells += 1
        self.bell()
        self.set_terminal_title(f"ioh-tui — waiting on you: {what}")
        if self.config.notify is not None:
            self.notified.append(what)
            self._write_terminal(sequence(self.config.notify, "ioh-tui: waiting on you", what))

    def no_longer_waiting(self) -> None:
        """No decision waits any more."""
        if self.terminal_title.startswith("ioh-tui — waiting"):
            self.set_terminal_title("ioh-tui — running" if self.running else "ioh-tui")

    def set_terminal_title(self, title: str) -> None:
        """Set the terminal window title (OSC 2); a no-op when headless."""
        self.terminal_title, _ = visible(title)
        self._write_terminal(f"\x1b]2;{self.terminal_title}\x07")

    def _write_terminal(self, sequence: str) -> None:
        # Textual 8.2.8 has no public API for the window title or notifications; the driver
        # writes raw output. Headless (tests, snapshots) there is no terminal to tell.
        driver = self._driver
        if driver is not None and not self.is_headless:
            driver.write(sequence)

    def action_stop_run(self) -> None:
        """Stop the run now: the engine ends it `cancelled`, keeping every committed step."""
        if self.cancel is None or not self.running:
            self.notify("No run is going.", timeout=3)
            return
        self.cancel.cancel("stopped from the app")
        if self.run_screen is not None:
            self.run_screen.stopping()

    def raise_budget(self, name: str, limit: float) -> None:
        """Raise one budget of the running run; the engine takes it at its next budget check."""
        if self.raises is None or not self.running:
            self.notify("No run is going.", timeout=3)
            return
        try:
            self.raises.raise_to(**{name: limit})
        except ConfigError as exc:
            self.notify(str(exc), severity="error")

    def action_stop_or_quit(self) -> None:
        """ctrl+c: stop a running run, else quit."""
        if self.running:
            self.action_stop_run()
        else:
            self.exit(self.exit_status)

    def action_quit_when_idle(self) -> None:
        """q: quit, but not while a run is going (stop it first)."""
        if self.running:
            self.notify("The run is still going: esc or ctrl+c stops it.", timeout=4)
            return
        self.exit(self.exit_status)

    async def action_quit(self) -> None:
        """ctrl+q: stop the run (if any) and quit."""
        self.exit(self.exit_status)

    def action_help(self) -> None:
        """F1 / ?: every key."""
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.help_sections()))

    def help_sections(self) -> list[tuple[str, Iterable[BindingType]]]:
        """Keys per place, straight from the bindings."""
        palette = [Binding("ctrl+p", "command_palette", "Command palette: search every command")]
        focus = [
            Binding("tab,shift+tab", "focus", "Move between the transcript, tool calls and fields")
        ]
        return [
            ("Everywhere", [*self.BINDINGS, *palette, *focus]),
            ("Run view", RunScreen.BINDINGS),
            ("Tool call (focused)", ToolCall.BINDINGS),
            ("Decision", ApprovalModal.BINDINGS),
            ("Decision queue", DecisionQueueScreen.BINDINGS),
            ("Budget nearly spent", BudgetModal.BINDINGS),
            ("Start screen", StartScreen.BINDINGS),
            ("Run browser", RunBrowserScreen.BINDINGS),
            ("Trace view", TraceScreen.BINDINGS),
        ]

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        """The command palette: the app's own commands first, then Textual's."""
        yield SystemCommand(
            "Stop the run", "Stop now; the outcome is cancelled", self.action_stop_run
        )
        yield SystemCommand("Help: keys", "Every key of the app", self.action_help)
        yield SystemCommand(
            "Browse runs", "Every run in the store: traces, resume, decisions", self.action_browse
        )
        yield SystemCommand(
            "Decision queue", "Every decision waiting on you, across runs", self.action_queue
        )
        if self.run_screen is not None:
            yield SystemCommand(
                "Gate output", "The verification gate's evidence", self.run_screen.action_gate
            )
        yield from super().get_system_commands(screen)

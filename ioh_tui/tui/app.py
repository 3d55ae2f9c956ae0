"""IohApp: composition, navigation and the app-wide keys.

The run itself is a `RunSupervisor`'s (`supervisor.py`: the engine's task, its stop switch, its
raised budgets, its result), hosted here in a worker; the terminal's bell, title and notifications
are `TerminalSignals`' (`notify.py`). Screens never call the app: their intents arrive as messages
(`messages.py`), handled below; what they need to know goes down through their constructors.

About 470 lines: the app-wide actions and message handlers, each importing its screen where it
is first used (the first frame imports none of them); navigation (home, browse, queue) is the
part to move out next.
"""

from __future__ import annotations

import asyncio
import gc
import signal
from collections.abc import Iterable
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any, ClassVar

from textual.app import App, SystemCommand
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.worker import Worker, WorkerState

from ioh_tui.core.errors import ConfigError
from ioh_tui.tui.app_run import PartsSource, Resumer, TrustQuestion, given
from ioh_tui.tui.config import AppConfig
from ioh_tui.tui.history import History
from ioh_tui.tui.messages import (
    BudgetRaiseRequested,
    DemoRequested,
    ResumeRequested,
    RunEnded,
    StopRequested,
    WaitingChanged,
)
from ioh_tui.tui.notify import TerminalSignals
from ioh_tui.tui.screens.start import StartScreen
from ioh_tui.tui.styles import stylesheet
from ioh_tui.tui.supervisor import RunSupervisor

if TYPE_CHECKING:
    # The other screens, the engine and the bridge are imported where they are first used: the
    # start screen's first frame must not wait for them (benchmarks/bench_tui_first_frame.py).
    from ioh_tui.engine import Resume, RunResult
    from ioh_tui.policy import Decision
    from ioh_tui.tui.screens.budget import BudgetAnswer
    from ioh_tui.tui.screens.run import RunScreen

RUN_GROUP = "run"
"""The worker group of the one run an app supervises."""
GC_YOUNG = 10_000
"""Allocations between young garbage collections while the app runs (Python's default: 700)."""


class AppTerminal:
    """The app's own terminal, as a `TerminalWriter`."""

    def __init__(self, app: App[Any]) -> None:
        self._app = app

    def write(self, sequence: str) -> None:
        """Write one escape sequence; nothing when headless (tests, snapshots have no terminal)."""
        # Textual 8.2.8 has no public API for the window title or notifications: its driver
        # writes raw output (its own `App.bell` does the same).
        driver = self._app._driver
        if driver is not None and not self._app.is_headless:
            driver.write(sequence)


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
            "l",
            "rules",
            "Rules",
            show=False,  # in help and the palette; the key bars stay each screen's own keys
            tooltip="Every rule in force, with its layer and file; revoke one from its file",
        ),
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
        self.history = History(config.store_path)
        """The store as every screen reads it."""
        self.supervisor = RunSupervisor(config.store_path)
        """The run: its engine task, stop switch, raised budgets and outcome."""
        self.signals = TerminalSignals(config.terminal or AppTerminal(self), config.notify)
        """The bell, the terminal title and notifications."""
        self.run_screen: RunScreen | None = None
        """The run view, once a run was started."""
        self._pending: PartsSource | None = config.run

    async def on_mount(self) -> None:
        """Open the run view when there is a run to supervise, else the start screen.

        Pushed rather than returned from `get_default_screen`: Textual 8.2.8 does not load a
        default screen's own `CSS_PATH`, and each screen keeps its stylesheet beside it.
        """
        # Fewer, larger young collections: with the default (700) a 100-agent tree's screen set
        # off a full collection (about 0.1 s, a visible stall) every half second; measured with
        # benchmarks/bench_tui_tree.py: 32 full collections in an 18 s run, then one.
        gc.set_threshold(GC_YOUNG, 10, 10)
        if not self.is_headless:  # under a test's Pilot the event loop is the test's
            self._stop_on_signals()
        if self._pending is not None and self.config.trust is not None:
            self._ask_trust(self.config.trust, 0, agreed=False)
        elif self._pending is not None:
            await self._drive()
        else:
            self.push_screen(self._start_screen())

    def _ask_trust(self, question: TrustQuestion, index: int, *, agreed: bool) -> None:
        """Show the project's sections one by one, then drive the run with what was agreed."""
        if index == len(question.sections):
            if agreed:
                try:
                    self._pending = given(question.rebuild())
                except ConfigError as exc:  # e.g. an agreed policy that no longer reads
                    self.notify(f"Run without the agreed sections: {exc}", severity="error")
            self.call_later(self._drive)
            return
        section = question.sections[index]

        def answered(use: bool | None) -> None:
            if use:
                question.agree(section.kind)
            self._ask_trust(question, index + 1, agreed=agreed or bool(use))

        from ioh_tui.tui.screens.trust import TrustModal

        modal = TrustModal(section, position=(index + 1, len(question.sections)))
        self.push_screen(modal, callback=answered)

    def _stop_on_signals(self) -> None:
        """SIGTERM and SIGHUP end the app as ctrl+q does.

        The run is stopped and recorded `cancelled`, and its temporary directories (the gate's,
        the demo's) are removed; Python's default would kill the process where it stands,
        leaving the run `running` for ever.
        """
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGHUP):
            loop.add_signal_handler(sig, self._signalled, sig)

    def _signalled(self, sig: int) -> None:
        self.supervisor.stop(f"stopped by {signal.Signals(sig).name}")
        self.exit(self.exit_status)

    def _start_screen(self) -> StartScreen:
        return StartScreen(
            self.history,
            remember_file=self.config.remember_file,
            demo_available=self.config.demo is not None,
            servers=self.config.mcp,
        )

    @property
    def running(self) -> bool:
        """Whether a run is being driven now."""
        return self.supervisor.running

    @property
    def result(self) -> RunResult | None:
        """How the last run ended, once it has."""
        return self.supervisor.result

    @property
    def exit_status(self) -> int:
        """The run's documented exit status (0 when no run was started; 2 for a bad setup)."""
        return self.supervisor.exit_status

    async def _drive(self) -> None:
        """Open a run view for the pending run and start it once the view can take events."""
        from ioh_tui.tui.bridge import EventForwarder, TuiApprover
        from ioh_tui.tui.screens.run import RunScreen

        source = self._pending
        if source is None:
            return
        screen = self.run_screen = RunScreen(
            self.supervisor,
            history=self.history,
            clock=self.clock,
            remember_file=self.config.remember_file,
        )
        await self.push_screen(screen)
        self._pending = None  # pending until now: no second run may start while the view mounts
        events = EventForwarder(screen)
        work = self.supervisor.begin(
            source, observer=events, approver=TuiApprover(screen, events), tell=screen.tell
        )
        self.run_worker(work, name="engine", group=RUN_GROUP, exit_on_error=False, exclusive=True)
        screen.refresh_bindings()  # the keys offered change with the run going ("Stop run")

    async def start(self, source: PartsSource) -> None:
        """Open a fresh run view and drive `source`'s run in it (the demo, a resumed run).

        One run at a time: once the previous run has ended, its view stays below the new one and
        the app's result, error and exit status become the new run's.
        """
        if self.running or self._pending is not None:
            self.notify(
                "A run is going in this app: stop it (ctrl+c) or let it end first.",
                severity="warning",
            )
            return
        self._pending = source
        self.supervisor.clear()
        await self._drive()

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
        from ioh_tui.engine import Resume

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
            self._resume(Resume(run_id, decision, overrides or {}), self.config.resumer),
            group="resume",
            description=f"resume run {run_id}",
            exclusive=True,
            exit_on_error=False,
        )

    async def _resume(self, request: Resume, resumer: Resumer) -> None:
        from ioh_tui.tui.resuming import BudgetSpent, ResumeRefused, resumed_run
        from ioh_tui.tui.screens.budget import BudgetModal

        try:
            run = await resumed_run(self.config.store_path, request, resumer)
        except BudgetSpent as exc:
            # The offer a live run gets, before the resume: the new limit goes in as an override.
            spent = exc.budget

            def raised(answer: BudgetAnswer | None) -> None:
                if answer is not None and answer.choice == "raise" and answer.limit is not None:
                    self.resume_run(request.run_id, request.decision, {spent.name: answer.limit})

            self.push_screen(BudgetModal(spent, stopped=request.run_id), callback=raised)
            return
        except ResumeRefused as exc:
            self.notify(str(exc), severity="warning", timeout=8)
            return
        await self.start(given(run))

    # -- what the screens ask for ------------------------------------------------------------------

    def on_resume_requested(self, message: ResumeRequested) -> None:
        """A screen asks to resume a stored run."""
        self.resume_run(message.run_id, message.decision, dict(message.overrides))

    async def on_demo_requested(self, _: DemoRequested) -> None:
        """The start screen asks for the demo."""
        await self.start_demo()

    def on_run_ended(self, message: RunEnded) -> None:
        """The root run finished (its last event arrived)."""
        self.signals.set_title(f"ioh-tui — {message.outcome}")
        self.refresh_bindings()

    def on_stop_requested(self, _: StopRequested) -> None:
        """The run view asks to stop the run (its budget offer's "stop")."""
        self.action_stop_run()

    def on_budget_raise_requested(self, message: BudgetRaiseRequested) -> None:
        """Raise one budget of the running run; the engine takes it at its next budget check."""
        try:
            raised = self.supervisor.raise_budget(message.name, message.limit)
        except ConfigError as exc:
            self.notify(str(exc), severity="error")
            return
        if not raised:
            self.notify("No run is going.", timeout=3)

    def on_waiting_changed(self, message: WaitingChanged) -> None:
        """A decision waits (bell, title, notification), or none does any more (title)."""
        if message.what is not None:
            self.signals.waiting(message.what)
        else:
            self.signals.not_waiting(running=self.running)

    # -- navigation --------------------------------------------------------------------------------

    def action_home(self) -> None:
        """Esc on an ended run view: back to the start screen, which is read again.

        The ended run views above it are closed (their runs are in the store: the run browser
        reopens their traces). Launched on a run, the app had no start screen: one is opened.
        """
        if self.running:
            return
        start = next((s for s in self.screen_stack if isinstance(s, StartScreen)), None)
        if start is None:
            self.push_screen(self._start_screen())
            return
        while self.screen is not start:
            self.pop_screen()
        self.run_screen = None

    def action_browse(self) -> None:
        """Open the run browser (from the command palette)."""
        from ioh_tui.tui.screens.runs import RunBrowserScreen

        if not isinstance(self.screen, RunBrowserScreen):
            self.push_screen(
                RunBrowserScreen(self.history, remember_file=self.config.remember_file)
            )

    def action_rules(self) -> None:
        """L: the rules in force for the run's workspace (no run: the current directory)."""
        from ioh_tui.tui.screens.rules import RulesScreen

        if isinstance(self.screen, RulesScreen):
            return
        run = self.run_screen
        root = run.transcript.root if run is not None else None
        self.push_screen(RulesScreen(root or Path.cwd(), run.remembered if run else ()))

    def action_queue(self) -> None:
        """The decision queue: this app's waiting asks (if a run goes) and the stored ones."""
        from ioh_tui.tui.screens.queue import DecisionQueueScreen

        if isinstance(self.screen, DecisionQueueScreen):
            return
        if self.run_screen is not None and self.running:
            self.run_screen.action_queue()
            return
        self.push_screen(DecisionQueueScreen(self.history, remember_file=self.config.remember_file))

    async def start_demo(self) -> None:
        """Drive the built-in demo (offered on the start screen)."""
        if self.config.demo is None:
            self.notify("The demo is not available in this build.", severity="warning")
            return
        await self.start(self.config.demo)

    async def on_unmount(self) -> None:
        """Closing mid-run: stop the run and let the engine record `cancelled` before the end."""
        await self.supervisor.close()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """Keep the run's result; turn a crash into a visible error instead of a traceback."""
        worker = event.worker
        if worker.group != RUN_GROUP:
            return
        if event.state in (WorkerState.SUCCESS, WorkerState.ERROR, WorkerState.CANCELLED):
            self.refresh_bindings()
        if event.state == WorkerState.SUCCESS:
            self.supervisor.result = worker.result
        elif event.state == WorkerState.ERROR:
            self.supervisor.error = worker.error
            self.notify(
                f"The run stopped with an error: {worker.error}", severity="error", timeout=30
            )
            if self.run_screen is not None:
                self.run_screen.status.outcome = f"error: {worker.error}"
            self.signals.not_waiting(running=self.running)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Offer "stop" while a run goes and "quit" once it has ended (the footer follows)."""
        if action == "stop_run":
            return self.running
        if action in ("quit_when_idle", "home"):
            return not self.running
        return True

    def action_stop_run(self) -> None:
        """Stop the run now: the engine ends it `cancelled`, keeping every committed step."""
        if not self.supervisor.stop("stopped from the app"):
            self.notify("No run is going.", timeout=3)
            return
        if self.run_screen is not None:
            self.run_screen.stopping()

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
        from ioh_tui.tui.screens.help import HelpScreen, help_sections

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(help_sections(self.BINDINGS)))

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
            "Rules", "Every rule in force, its layer and file; revoke one", self.action_rules
        )
        yield SystemCommand(
            "Decision queue", "Every decision waiting on you, across runs", self.action_queue
        )
        if self.run_screen is not None:
            yield SystemCommand(
                "Gate output", "The verification gate's evidence", self.run_screen.action_gate
            )
        yield from super().get_system_commands(screen)

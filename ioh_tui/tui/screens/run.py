"""RunScreen: one run, live — transcript | meters, gate and facts | status line — and its decisions.

Engine events arrive in batches, each an `EngineEventMessage`, and are dispatched here with
`match`; decisions arrive as `ApprovalNeeded` and go to the screen's `DecisionDesk`
(`screens/desk.py`). What the screen knows of the run comes down through `Supervision`; what it
asks of the app goes up as messages (`RunEnded`, `StopRequested`, `BudgetRaiseRequested`; the
desk's `WaitingChanged`).

(Over 400 lines: the one `match` over engine events and the frame that shows them a batch at a
time share the panes they update; the budgets and the long-run sections (compactions, notes) are
the next to move out, as the decisions did.)
"""

from __future__ import annotations

import asyncio
from functools import cached_property, partial
from pathlib import Path
from typing import ClassVar, NamedTuple

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import ContentSwitcher, Static, Tree

from ioh_tui.core import events as ev
from ioh_tui.fleet.census import HERE, Census
from ioh_tui.policy.types import Rule
from ioh_tui.tui.app_run import RunContext
from ioh_tui.tui.cluster import cluster_text, follow
from ioh_tui.tui.describe import extension_line, one_line
from ioh_tui.tui.history import History
from ioh_tui.tui.memory import stored_notes, stored_summary
from ioh_tui.tui.messages import (
    ApprovalNeeded,
    BudgetRaiseRequested,
    EngineEventMessage,
    RunEnded,
    StopRequested,
)
from ioh_tui.tui.pictures import Album
from ioh_tui.tui.screens.budget import BudgetAnswer, BudgetModal
from ioh_tui.tui.screens.confirm_stop import ConfirmStopModal
from ioh_tui.tui.screens.desk import DecisionDesk
from ioh_tui.tui.screens.gate import GateModal
from ioh_tui.tui.screens.image import ImageModal
from ioh_tui.tui.screens.summary import SummaryModal
from ioh_tui.tui.styles import stylesheet
from ioh_tui.tui.supervisor import Supervision
from ioh_tui.tui.totals import Budget, Clock, ContextUse, Totals
from ioh_tui.tui.widgets.agent_tree import AgentTree
from ioh_tui.tui.widgets.compaction import Compaction
from ioh_tui.tui.widgets.file_changes import FileChanges
from ioh_tui.tui.widgets.gate_status import GateStatus
from ioh_tui.tui.widgets.image_view import ImageShelf
from ioh_tui.tui.widgets.key_bar import KeyBar
from ioh_tui.tui.widgets.meter import Meter
from ioh_tui.tui.widgets.notes import Notes
from ioh_tui.tui.widgets.processes import Processes
from ioh_tui.tui.widgets.rung_warning import RungWarning
from ioh_tui.tui.widgets.status_line import StatusLine
from ioh_tui.tui.widgets.transcript import Transcript

UNCONFINED = "NONE — commands run unconfined, with your rights and your network"
"""How the app names the `none` rung (asked for explicitly with `--sandbox none`)."""
NARROW_BELOW = 100
"""Below this width the side panel becomes a compact strip above the transcript."""
FRAME_S = 0.1
"""Engine events are shown together, at most this often (`RunScreen.frame`). Ten agents at once
make events far faster than the screen can redraw; measured in benchmarks/bench_tui_tree.py."""


class Panes(NamedTuple):
    """The panes that engine events change."""

    transcript: Transcript
    tree: AgentTree
    gate: GateStatus
    status: StatusLine


class RunScreen(Screen[None]):
    """The supervision view of one run."""

    CSS_PATH = stylesheet("run")
    AUTO_FOCUS = "#transcript"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "escape",
            "confirm_stop",
            "Stop run…",
            tooltip="Stop the run (asks first; the outcome is cancelled)",
        ),
        Binding(
            "escape",
            "app.home",
            "Back",
            tooltip="Once the run has ended: the start screen (decisions waiting, recent runs)",
        ),
        Binding(
            "g", "gate", "Gate output", tooltip="The verification gate's command and output tail"
        ),
        Binding("q", "app.quit_when_idle", "Quit", tooltip="Quit once the run has ended"),
        Binding("w", "queue", "Queue", tooltip="Every decision waiting on you, in one list"),
        Binding(
            "c",
            "summary",
            "Summary",
            tooltip="The latest compaction's summary (of the agent shown); shown once there is one",
        ),
        Binding(
            "a",
            "all_agents",
            "All agents",
            show=False,
            tooltip="Show every agent's lines (clear the agent filter)",
        ),
        Binding(
            "f",
            "drawer('file-changes')",
            "Changes",
            show=False,
            tooltip="Show or hide the files the run changed, with their diffs",
        ),
        Binding(
            "p",
            "drawer('processes')",
            "Processes",
            show=False,
            tooltip="Show or hide the running commands' processes (CPU, memory)",
        ),
    ]
    """Keys of the run view (ctrl+c, F1 and ctrl+p are app-wide)."""

    def __init__(
        self, run: Supervision, *, history: History, clock: Clock, remember_file: Path
    ) -> None:
        super().__init__()
        self.run = run
        """What the screen knows of the run it shows (whether it goes, the engine's task)."""
        self.clock = clock
        """Time source for the elapsed meter (fixed in snapshots)."""
        self.totals = Totals()
        """What the meters show."""
        self.outcome: str | None = None
        """How the root run ended, once it has."""
        self.desk = DecisionDesk(
            self,
            history=history,
            remember_file=remember_file,
            say_waiting=self._say_waiting,
            run_id=lambda: self.run_id,
        )
        """The run's decisions: the asks, the modal on screen, the queue."""
        self.offered: set[tuple[str, float]] = set()
        """Budgets (name, limit) already offered to raise: each limit is offered once."""
        self.run_id: int | None = None
        """The root run's id, once it started."""
        self.budget_offer: BudgetModal | None = None
        """The budget offer on screen, if any (it closes when the run ends)."""
        self.remembered: list[Rule] = []
        """Rules remembered while this run goes (every scope: all hold for the rest of it)."""
        self._run_context: RunContext | None = None
        self.store_path = history.path
        """The store the engine writes: summaries and a resumed run's notes are read from it."""
        self.album = Album(history.path)
        """Where the calls' images are read from, once their steps are committed."""
        self.contexts: dict[int | None, ContextUse] = {}
        """How full each agent's context window is (None: the root)."""
        self.compactions: dict[int | None, Compaction] = {}
        """Each agent's latest compaction in this drive (what `c` opens; kept past pruning)."""
        self._inbox: list[ev.Event] = []
        """Events not shown yet (the next frame shows them)."""
        self._frame_timer: Timer | None = None
        self._framing = asyncio.Lock()
        """Held while a frame shows events: a frame that waits is never overtaken by the next."""

    def compose(self) -> ComposeResult:
        """A weak sandbox's warning, transcript beside the side panel, status line, keys."""
        yield RungWarning(id="rung-warning")
        with Horizontal(id="body"):
            yield Transcript(id="transcript")
            yield AgentTree(id="agent-tree")
            with Vertical(id="side"):
                yield Static("", id="run-goal", markup=False)
                yield Meter("steps", id="meter-steps")
                yield Meter("time", id="meter-time")
                yield Meter("tokens", id="meter-tokens")
                yield Meter("cost", id="meter-cost")
                yield Meter("context", unbounded="no call yet", id="meter-context")
                yield GateStatus(id="gate")
                yield Notes(id="notes")
                yield Static("", id="run-facts", markup=False)
        # The workspace panes share one drawer under the body, closed until asked for (f / p).
        with ContentSwitcher(id="drawer", initial="file-changes"):
            yield FileChanges(id="file-changes")
            yield Processes(id="processes")
        yield StatusLine(id="status")
        yield KeyBar()

    @property
    def transcript(self) -> Transcript:
        """The transcript pane."""
        return self.panes.transcript

    @property
    def agent_tree(self) -> AgentTree:
        """The sub-agent tree pane (shown once the run turns out to be a tree)."""
        return self.panes.tree

    @property
    def gate(self) -> GateStatus:
        """The gate badge."""
        return self.panes.gate

    @property
    def status(self) -> StatusLine:
        """The status line."""
        return self.panes.status

    @cached_property
    def panes(self) -> Panes:
        """The panes events change, found once: a query walks the transcript's every block."""
        return Panes(
            self.query_one(Transcript),
            self.query_one(AgentTree),
            self.query_one(GateStatus),
            self.query_one(StatusLine),
        )

    def on_mount(self) -> None:
        """Draw the empty meters and tick the clock."""
        self._meters()
        self.set_interval(1.0, self._tick, name="elapsed")

    def on_resize(self, event: events.Resize) -> None:
        """Compact layout on narrow terminals."""
        self.set_class(event.size.width < NARROW_BELOW, "-narrow")

    def tell(self, context: RunContext) -> None:
        """The run's context, before its first event (attributes down from the app)."""
        self._run_context = context
        self.transcript.root = context.root
        self.gate.configure(context.criterion)
        self.query_one("#run-goal", Static).update(f"goal: {one_line(context.goal, 200)}")
        self.status.facts = (context.label, f"workspace {context.root.name}")
        self._facts(sandbox="")
        # The panes follow the workspace and the commands for as long as the engine runs.
        self.query_one(FileChanges).watch_workspace(context.root, until=self.run.engine)
        self.query_one(Processes).follow(until=self.run.engine)
        if context.cluster is not None and self.run.engine is not None:
            self.run_worker(
                follow(context.cluster, self.run.engine, self._on_cluster),
                group="cluster",
                description="count the cluster the tree runs on",
                exit_on_error=False,
            )

    def _on_cluster(self, census: Census | None, nodes: dict[int, str]) -> None:
        """The cluster in the status line, each agent's node in the tree (the root's is here)."""
        if census is not None:
            self.status.cluster = cluster_text(census)
        if self.run_id is not None:
            nodes[self.run_id] = HERE
        self.agent_tree.place(nodes)

    def _facts(self, *, sandbox: str, provider: str = "", instructions: str | None = None) -> None:
        if self._run_context is None:
            return
        lines = [f"model: {self._run_context.label}"]
        if provider:
            lines.append(f"provider: {provider}")
        unconfined = sandbox == "none"
        lines.append(f"sandbox: {UNCONFINED if unconfined else sandbox or '…'}")
        lines.append(f"workspace: {self._run_context.root.name}")
        if instructions:
            # AGENTS.md (or CLAUDE.md) is pinned in every request: say which file it was.
            lines.append(f"instructions: {instructions} (pinned in every request)")
        self.query_one("#run-facts", Static).update("\n".join(lines))
        if sandbox:
            self.query_one(RungWarning).show(sandbox)
        facts = [self._run_context.label]
        if sandbox:
            facts.append(f"sandbox {sandbox}")
        facts.append(f"workspace {self._run_context.root.name}")
        if unconfined:
            # First, so a narrow status line drops everything else before it.
            facts.insert(0, "UNSANDBOXED")
        self.status.facts = tuple(facts)
        if unconfined and not self.has_class("-unsandboxed"):
            self.add_class("-unsandboxed")
            self.notify(f"--sandbox none: {UNCONFINED}.", severity="error", timeout=30)

    def _tick(self) -> None:
        if self.totals.started_at is not None and self.totals.finished_at is None:
            self._meters()
            self._offer_budget()

    def _meters(self) -> None:
        t = self.totals
        self.query_one("#meter-steps", Meter).show(t.step, t.max_steps, t.steps_reading())
        self.query_one("#meter-time", Meter).show(
            t.elapsed(self.clock), t.time_budget_s, t.time_reading(self.clock)
        )
        self.query_one("#meter-tokens", Meter).show(t.tokens, t.token_budget, t.tokens_reading())
        self.query_one("#meter-cost", Meter).show(t.cost_usd, None, t.cost_reading())
        self._context_meter()

    @property
    def shown_agent(self) -> int | None:
        """The sub-agent the view is narrowed to (None: the root, or every agent)."""
        return self.transcript.only

    def _context_meter(self) -> None:
        """The shown agent's context: its latest prompt against its window."""
        agent = self.shown_agent
        use = self.contexts.get(agent) or ContextUse()
        meter = self.query_one("#meter-context", Meter)
        meter.relabel("context" if agent is None else f"context · agent {agent}")
        meter.show(use.used or 0, use.window if use.used is not None else None, use.reading())

    def _show_agent(self, agent: int | None) -> None:
        """Narrow the view to one agent (None: all): its transcript lines, context and notes."""
        self.transcript.show_only(agent)
        self.query_one(Notes).show_agent(agent)
        self._context_meter()
        self.refresh_bindings()

    # -- engine events ---------------------------------------------------------------------------

    def on_engine_event_message(self, message: EngineEventMessage) -> None:
        """Take engine events; the next frame shows them (with every other that came by then)."""
        self._inbox.extend(message.events)
        if self._frame_timer is None:
            self._frame_timer = self.set_timer(FRAME_S, self.frame, name="frame")

    @property
    def settled(self) -> bool:
        """Whether every event received so far is on the screen (none waiting, no frame running)."""
        return not self._inbox and self._frame_timer is None and not self._framing.locked()

    async def frame(self) -> None:
        """Show the events that came since the last frame, all at once.

        Every change to the screen costs a layout and render pass (tens of milliseconds with a
        long transcript), so changes made one event at a time, by ten agents at once, kept the
        screen busy and keys waiting. Within a frame, the transcript's new blocks are mounted
        together, changed tree labels are redrawn and streamed text is handed on.

        Not a `batch_update`: closing a stream or mounting blocks waits on the loop (up to a
        tenth of a second with a 100-agent run), and a batch would keep the screen from drawing
        anything, a key's effect included, until the frame ends. Frames never overlap (a frame
        that waits longer than `FRAME_S` is not overtaken), so events show in the engine's order.
        """
        if self._frame_timer is not None:
            self._frame_timer.stop()
            self._frame_timer = None
        async with self._framing:
            events, self._inbox = self._inbox, []
            for event in events:
                await self._show_event(event)
            self.agent_tree.flush()
            await self.transcript.flush()

    async def _show_event(self, event: ev.Event) -> None:
        root = event.parent_id is None
        if root and self.totals.apply(event, self.clock):
            self._meters()
            self._offer_budget()
        elif isinstance(event, ev.TreeStatus) and self.totals.tree_ceiling is not None:
            self._offer_budget()  # the tree's ceiling
        if (not root or isinstance(event, ev.TreeStatus)) and not self.has_class("-tree"):
            self.add_class("-tree")
            # The tree's header counts every agent's tokens: this meter says it is the root's.
            self.query_one("#meter-tokens", Meter).relabel("tokens · root agent")
        if self.has_class("-tree") or root:
            self.agent_tree.apply(event)
        agent = None if root else event.agent_id
        use = self.contexts.get(agent)
        if use is None:
            use = self.contexts[agent] = ContextUse()
        if use.apply(event) and agent == self.shown_agent:
            self._context_meter()
        await self.handle(event, agent)

    async def handle(self, event: ev.Event, agent: int | None) -> None:  # noqa: C901 - one arm per event kind
        """Show one event (the `match` is the dispatch table)."""
        transcript = self.transcript
        who = f"agent {agent}" if agent is not None else ""
        match event:
            case ev.RunStarted(sandbox=sandbox, provider=provider, resumed_from_step=resumed):
                if resumed is not None:
                    self._restore_notes(_own_run(event), agent, resumed)
                if agent is None:
                    self.run_id = event.run_id
                    self._facts(sandbox=sandbox, provider=provider, instructions=event.instructions)
                    self.status.activity = "started"
                for warning in event.warnings:
                    await transcript.note(f"warning: {warning}", "-warning", agent)
            case ev.StepStarted(step=step):
                await transcript.start_step(step, agent, who)
                self.status.activity = f"step {step}: waiting for the model"
            case ev.TextDelta(step=step, text=text):
                await transcript.append(step, text, thinking=False, agent=agent)
                self.status.activity = f"step {step}: writing"
            case ev.ThinkingDelta(step=step, text=text):
                await transcript.append(step, text, thinking=True, agent=agent)
                self.status.activity = f"step {step}: thinking"
            case ev.ToolCallStarted(call_id=call_id, name=name, arguments=arguments):
                started = await transcript.add_call(call_id, name, arguments, agent)
                self.status.activity = f"running: {started.line}"
            case ev.ToolOutput(call_id=call_id, text=text):
                if (call := transcript.call(call_id, agent)) is not None:
                    call.add_output(text)
            case ev.ToolCallFinished(
                call_id=call_id, ok=ok, refused=refused, summary=summary, output=output
            ):
                if (call := transcript.call(call_id, agent)) is not None:
                    stored = self.album.at(_own_run(event), event.step, call_id)
                    call.finish(
                        ok=ok, refused=refused, summary=summary, output=output, stored=stored
                    )
            case ev.ApprovalRequested(act=act, target=target):
                if (call := transcript.running_call(agent)) is not None:
                    call.status = "waiting"
                self.status.activity = f"asking: {act} {target}"
            case ev.ApprovalResolved():
                await self._resolved(event, agent)
            case ev.RetryScheduled(step=step, attempt=attempt, error_kind=kind, delay_ms=delay):
                note = (
                    f"attempt {attempt} failed ({kind}); retrying in {delay / 1000:.1f}s"
                    " — its streamed text is discarded"
                )
                await transcript.void(step, agent, note)
                self.status.activity = f"step {step}: retrying"
            case ev.StepFinished(step=step):
                self.album.commit(_own_run(event), step)
                await transcript.close_stream(agent)
            case ev.ContextCompacted(step=step, tokens_before=before, tokens_after=after):
                await self._compacted(event, agent, step, before, after)
            case ev.NoteAdded(text=text):
                self.query_one(Notes).add(agent, text)
            case ev.StallWarned(step=step, detail=detail):
                await transcript.note(f"stall warning at step {step}: {detail}", "-stall", agent)
                self.notify(
                    f"{who or 'The agent'} is repeating itself (step {step}): told to change"
                    " approach; the next stall ends the run.",
                    title="Stall warning",
                    severity="warning",
                )
            case ev.FellBack(step=step, from_provider=from_, to_provider=to):
                await transcript.note(
                    f"fell back at step {step}: {from_} → {to} (its retries were spent)",
                    "-fallback",
                    agent,
                )
                self.notify(
                    f"{who or 'The run'} now uses {to}: {from_} failed past its retries.",
                    title="Fallback provider",
                    severity="warning",
                )
            case ev.VerificationStarted(criterion=criterion) if agent is None:
                self.gate.started(criterion)
                self.status.activity = "verifying"
            case ev.VerificationFinished(status=status, detail=detail) if agent is None:
                self.gate.finished(status, detail)
                first = detail.splitlines()[0] if detail else ""
                await transcript.note(f"gate {status}: {one_line(first, 120)}", f"-gate-{status}")
            case ev.AgentSpawned(goal=goal):
                await transcript.note(
                    f"agent {event.agent_id} spawned: {one_line(goal, 100)}", "-agent", agent
                )
            case ev.AgentFinished(outcome=outcome):
                await transcript.note(
                    f"agent {event.agent_id} finished: {outcome}", "-agent", agent
                )
            case ev.RunFinished(outcome=outcome, detail=detail) if agent is None:
                await self._finished(outcome, detail)
            case ev.HookRan() | ev.SkillLoaded():
                await transcript.note(*extension_line(event), agent)
            case _:
                pass

    async def _resolved(self, event: ev.ApprovalResolved, agent: int | None) -> None:
        call = self.transcript.running_call(agent)
        if event.decision == "defer":
            if call is not None:
                call.status = "deferred"
            text = f"decision {event.request_id} deferred: the run pauses until it is answered"
        else:
            verb = (
                "approved" + (" (rewritten)" if event.modified else "")
                if event.decision == "approve"
                else "denied"
            )
            by = "you" if event.by == "approver" else event.by
            text = f"decision {event.request_id} {verb} by {by}"
            if event.remembered:
                text += f"; remembering {', '.join(event.remembered)}"
                self.remembered.extend(Rule.parse(rule) for rule in event.remembered)
            if event.reason:
                text += f" — {event.reason}"
            if call is not None and call.status == "waiting":
                call.status = "running"
        await self.transcript.note(text, f"-decision -{event.decision}")

    async def _finished(self, outcome: str, detail: str) -> None:
        self.outcome = outcome
        self.album.close()
        if self.budget_offer is not None and self.budget_offer in self.app.screen_stack:
            self.budget_offer.dismiss(None)  # moot once the run has ended
        await self.transcript.finish_streams()
        for call in self.transcript.calls:
            if call.status in ("running", "waiting"):
                call.status = "cancelled" if outcome == "cancelled" else call.status
        self.status.outcome = outcome
        suffix = f": {one_line(detail, 160)}" if detail else ""
        await self.transcript.note(f"run {outcome}{suffix}", f"-outcome -{outcome}")
        self._tell_app(RunEnded(outcome))

    # -- decisions ---------------------------------------------------------------------------------

    async def on_approval_needed(self, message: ApprovalNeeded) -> None:
        """Hand the ask to the desk, after the events that led to it (its tool call is waiting)."""
        await self.frame()
        self.desk.take(message)

    def _tell_app(self, message: Message) -> None:
        # Straight to the app, not bubbled through this screen: its queue may hold a frame's worth
        # of engine events, and a stop or a raised budget must not wait behind them.
        self.app.post_message(message)

    def _say_waiting(self, what: str) -> None:
        self.status.waiting = what

    def action_queue(self) -> None:
        """w: every pending decision — this run's agents and deferred runs — in one list."""
        self.desk.show_queue()

    # -- budgets -----------------------------------------------------------------------------------

    def _offer_budget(self) -> None:
        """A budget nearly spent: offer once per limit to raise it, stop, or let the run finish.

        Never over another dialog: a decision outranks the offer, which comes at the next tick.
        """
        if not self.run.running or self.app.screen is not self:
            return
        for budget in self.totals.nearly_spent(self.clock):
            if (budget.name, budget.limit) in self.offered:
                continue
            self.offered.add((budget.name, budget.limit))
            self.budget_offer = BudgetModal(budget)
            self.app.push_screen(self.budget_offer, callback=partial(self._budget, budget))
            return

    def _budget(self, budget: Budget, answer: BudgetAnswer | None) -> None:
        self.budget_offer = None
        if answer is None or answer.choice == "finish":
            # The engine holds its next model call for this answer (a raise and a stop end the
            # hold themselves, once the app has taken them).
            if self.run.raises is not None:
                self.run.raises.answer(budget.name, budget.limit)
            return
        if answer.choice == "stop":
            self._tell_app(StopRequested())
        elif answer.limit is not None:
            self._tell_app(BudgetRaiseRequested(budget.name, answer.limit))
            self.notify(f"Raised: taken before the next step ({budget.describe()} used).")

    def action_gate(self) -> None:
        """g: the gate's evidence."""
        gate = self.gate
        self.app.push_screen(
            GateModal(
                state=gate.state,
                criterion=gate.criterion,
                detail=gate.detail,
                attempts=gate.attempts,
            )
        )

    def on_tree_node_selected(self, message: Tree.NodeSelected[int | None]) -> None:
        """A node chosen in the agent tree: show only that agent (the root: everyone)."""
        agent = message.node.data
        tree = self.agent_tree
        if message.node is tree.root or agent is None or agent == tree.root_agent:
            self._show_agent(None)
        else:
            self._show_agent(agent)

    def action_all_agents(self) -> None:
        """a: show every agent's lines again."""
        self._show_agent(None)

    def stopping(self) -> None:
        """The app asked the engine to stop."""
        self.status.stopping = True

    # -- workspace panes ---------------------------------------------------------------------------

    def action_drawer(self, pane: str) -> None:
        """Open a workspace pane under the transcript (f, p); the same key again closes it."""
        drawer = self.query_one("#drawer", ContentSwitcher)
        if self.has_class("-drawer") and drawer.current == pane:
            self.remove_class("-drawer")
            if self.focused is not None and drawer in self.focused.ancestors:
                self.transcript.focus()
            return
        drawer.current = pane
        self.add_class("-drawer")
        # Arrow keys then move along the list at once (the files list shows each file's diff).
        self.query_one(f"#{pane} DataTable").focus()

    # -- long runs: compactions and notes --------------------------------------------------------

    async def _compacted(
        self, event: ev.ContextCompacted, agent: int | None, step: int, before: int, after: int
    ) -> None:
        block = Compaction(
            run_id=_own_run(event), step=step, before=before, after=after, agent=agent
        )
        self.compactions[agent] = block
        await self.transcript.mount_block(block, agent)
        if agent == self.shown_agent:
            self.refresh_bindings()  # c now has a summary to open

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Stop is offered while the run goes; the summary once the agent shown has one."""
        if action == "confirm_stop":
            return self.run.running
        if action == "summary":
            return self.shown_agent in self.compactions
        return True

    def action_confirm_stop(self) -> None:
        """esc: ask before stopping the run; one stray key never throws a run away."""

        def answered(stop: bool | None) -> None:
            if stop and self.run.running:
                self._tell_app(StopRequested())

        self.app.push_screen(ConfirmStopModal(), callback=answered)

    def action_summary(self) -> None:
        """c: the latest compaction's summary, of the agent shown."""
        if (latest := self.compactions.get(self.shown_agent)) is not None:
            self._open_summary(latest)

    def on_compaction_opened(self, message: Compaction.Opened) -> None:
        """Enter on a compaction block: its summary."""
        self._open_summary(message.compaction)

    def on_image_shelf_opened(self, message: ImageShelf.Opened) -> None:
        """The `i` key on a call with images: them at the pane's size."""
        if message.shelf.stored is not None:
            self.app.push_screen(ImageModal(message.shelf.stored, message.shelf.lines))

    def _open_summary(self, block: Compaction) -> None:
        self.run_worker(
            self._summary(block),
            group="summary",
            description="read a compaction's summary",
            exit_on_error=False,
        )

    async def _summary(self, block: Compaction) -> None:
        """Read the summary from the store (the event does not carry it) and show it."""
        try:
            row = await stored_summary(
                self.store_path, block.run_id, step=block.step, tokens_before=block.before
            )
        except Exception as exc:  # a store the app cannot read is a notice, never a crash
            self.notify(f"Cannot read the summary: {exc}", severity="error")
            return
        who = f" (agent {block.agent})" if block.agent is not None else ""
        self.app.push_screen(
            SummaryModal(
                heading=block.describe() + who,
                summary=row.text if row is not None else None,
                turns=row.turns if row is not None else None,
            )
        )

    def _restore_notes(self, run_id: int, agent: int | None, through_step: int) -> None:
        """A resumed run's (or agent's) earlier notes, read from its committed steps."""

        async def restore() -> None:
            try:
                notes = await stored_notes(self.store_path, run_id, through_step=through_step)
            except Exception as exc:  # the run goes on; only its earlier notes are not shown
                self.notify(f"Cannot read the run's earlier notes: {exc}", severity="warning")
                return
            self.query_one(Notes).restore(agent, notes)

        self.run_worker(
            restore(), group="notes", description="read a resumed run's notes", exit_on_error=False
        )


def _own_run(event: ev.Event) -> int:
    """The run an event's agent keeps in the store (a sub-agent's own, else the root's)."""
    return event.agent_id if event.agent_id is not None else event.run_id

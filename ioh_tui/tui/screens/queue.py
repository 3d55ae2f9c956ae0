"""DecisionQueueScreen: every decision waiting on you, across agents and across runs, in one place.

Four kinds of rows:
- `waiting`: asked by the run this app drives (any agent of its tree); the engine awaits the answer.
- `deferred`: parked in the store by a paused run; answering resumes that run here.
- `elsewhere`: asked by a run another process drives; answered through the store (any answer
  but defer, which leaves it pending), as `ioh-tui resume RUN_ID --decide` does; the first
  answer wins.
- `crashed`: asked by a run whose process died while asking; resuming it here asks again.

Similar requests can be answered together (`s` marks them; `y`, `A`, `n`, `d` answer the marked
ones), with a suggested rule (`ioh_tui.policy.suggest`), stored ones too: their answers go into
the store, where a run another process drives takes them at once and a paused run takes them when
it is resumed (anywhere), without asking again. Crashed runs ask again when resumed, so they are
not marked.

Just over 400 lines: the four kinds share the table, the marks and the batch answer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, ClassVar, Literal

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import DataTable, Static

from ioh_tui.engine.decide import request_from_row
from ioh_tui.policy import ApprovalRequest, Decision
from ioh_tui.policy.suggest import similarity_key, suggest_pattern
from ioh_tui.store import ApprovalRow
from ioh_tui.tui.describe import one_line, why_asked
from ioh_tui.tui.history import History
from ioh_tui.tui.messages import ApprovalNeeded, ResumeRequested
from ioh_tui.tui.screens.answer import StoredApprovalModal
from ioh_tui.tui.screens.approval import SPLIT_FROM, ApprovalModal
from ioh_tui.tui.screens.batch import BatchModal, BatchMode
from ioh_tui.tui.styles import stylesheet
from ioh_tui.tui.widgets.key_bar import KeyBar

Where = Literal["waiting", "deferred", "elsewhere", "crashed"]
BATCHED: tuple[Where, ...] = ("waiting", "deferred", "elsewhere")
"""The rows that can be marked and answered together."""


async def answer_live(
    screen: Screen[Any], history: History, request: ApprovalRequest, decision: Decision
) -> bool:
    """Answer a request that a run another process drives waits on, through the store.

    As `ioh-tui resume RUN_ID --decide` on a live run: approve, rewrite, remember or deny, sealed,
    and the first answer wins. The waiting run re-checks a rewrite against its policy before it
    runs it, and keeps a remembered rule for the rest of the run; a rule for the project, the
    user or a file is saved here (`History.keep`), as the run's own gate would save it.

    Returns:
        Whether this answer landed.
    """
    landed = await history.answer([request], decision, by="attached") > 0
    if not landed:
        screen.notify("Someone else answered it first.", severity="warning")
        return False
    not_saved = await history.keep([request], decision)
    said = f"Answered request {request.request_id} ({answer_name(decision)})."
    screen.notify(f"{said} {not_saved}".strip(), severity="warning" if not_saved else "information")
    return True


def answer_name(decision: Decision) -> str:
    """How an answer is named to the person: approve, rewrite, remember (its rules), deny."""
    if decision.remember:
        rules = ", ".join(rule.describe() for rule in decision.remember)
        return f"remember {rules}, {decision.scope}"
    if decision.modified:
        return "rewrite"
    return decision.kind


def ask_live(screen: Screen[Any], history: History, row: ApprovalRow, remember_file: Path) -> None:
    """The decision modal over a request a run another process drives waits on; then the store.

    Defer (or esc) leaves it pending; any other answer is written (`answer_live`).
    """
    request = request_from_row(row)
    modal = StoredApprovalModal(
        request, remember_file=remember_file, wide=screen.app.size.width >= SPLIT_FROM
    )

    def answered(decision: Decision | None) -> None:
        if decision is not None and decision.kind != "defer":
            screen.run_worker(
                answer_live(screen, history, request, decision),
                group="answer-live",
                description="answer a decision through the store",
                exit_on_error=False,
            )

    screen.app.push_screen(modal, callback=answered)


@dataclass(slots=True)
class QueueItem:
    """One pending decision as the queue shows it."""

    where: Where
    request: ApprovalRequest
    ask: ApprovalNeeded | None = None
    """The engine's waiting ask (rows of this app's run)."""
    root_run_id: int = 0
    """The run to resume (deferred rows)."""

    @property
    def key(self) -> str:
        """The row key: unique across kinds."""
        return f"{self.where}:{self.request.request_id}"


class DecisionQueueScreen(Screen[None]):
    """The queue of pending decisions."""

    CSS_PATH = stylesheet("queue")
    AUTO_FOCUS = "#queue-table"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "answer", "Answer", tooltip="Open this decision with all five answers"),
        Binding("space", "mark", "Mark", tooltip="Mark or unmark a waiting request"),
        Binding("s", "mark_similar", "Mark similar", tooltip="Mark every request like this one"),
        Binding("y", "approve_marked", "Approve marked", tooltip="Approve the marked requests"),
        Binding(
            "A",
            "batch('remember')",
            "Remember rule",
            tooltip="Approve the marked requests and keep the suggested (editable) rule",
        ),
        Binding("n", "batch('deny')", "Deny marked", tooltip="Deny the marked, with one reason"),
        Binding("d", "defer_marked", "Defer marked", tooltip="Park the marked requests"),
        Binding("r", "reload", "Reload", tooltip="Read deferred decisions from the store again"),
        Binding("escape", "close", "Back"),
    ]
    """Keys of the queue (answers act on the marked rows, or the row under the cursor)."""

    def __init__(
        self,
        history: History,
        *,
        live: Callable[[], list[ApprovalNeeded]] | None = None,
        driven_run: int | None = None,
        remember_file: Path,
    ) -> None:
        super().__init__()
        self.history = history
        """Where stored decisions are read from and answered through."""
        self.live = live
        """The asks of this app's run (None when no run is driven)."""
        self.driven_run = driven_run
        """This app's run, whose stored pending rows are its live asks."""
        self.remember_file = remember_file
        """Default file for a rule remembered from the single-decision modal."""
        self.items: list[QueueItem] = []
        """The rows, in table order."""
        self.stored: list[QueueItem] = []
        """Rows read from the store (deferred and elsewhere)."""
        self.marked: set[str] = set()
        """Keys of the marked rows."""

    def compose(self) -> ComposeResult:
        """A heading, the table, the hint for the row under the cursor, the keys."""
        yield Static("Decisions waiting on you", id="queue-title")
        yield DataTable(id="queue-table", cursor_type="row", zebra_stripes=True)
        yield Static("", id="queue-hint", markup=False)
        yield KeyBar()

    def on_mount(self) -> None:
        """Columns, then the rows (the store is read in a worker)."""
        table = self.query_one(DataTable)
        table.add_columns("", "where", "agent", "act", "target", "why", "goal")
        self.refresh_rows()

    def on_screen_resume(self) -> None:
        """Shown (first, or back from an answer or a run): read the stored decisions."""
        self.action_reload()

    def action_reload(self) -> None:
        """r: read the deferred decisions again."""
        self.run_worker(
            self._load(), group="queue", description="read pending decisions", exit_on_error=False
        )

    async def _load(self) -> None:
        rows: list[QueueItem] = []
        for ask in await self.history.asks():
            if ask.root == self.driven_run:
                continue  # this app's run: its asks are the waiting rows
            where: Where = "deferred"
            if ask.run.status != "paused":
                where = "elsewhere" if ask.root_driven else "crashed"
            rows.append(QueueItem(where, request_from_row(ask.row), None, ask.root))
        self.stored = rows
        self.refresh_rows()

    def refresh_rows(self) -> None:
        """Redraw from the live asks and the last store read, keeping the cursor's row."""
        live = [
            QueueItem("waiting", ask.request, ask)
            for ask in (self.live() if self.live is not None else [])
            if not ask.future.done()
        ]
        self.items = [*live, *self.stored]
        keys = {i.key for i in self.items}
        self.marked &= keys
        table = self.query_one(DataTable)
        current = self._current()
        table.clear()
        for item in self.items:
            r = item.request
            table.add_row(
                "✓" if item.key in self.marked else "",
                item.where,
                r.agent_label,
                r.act.value,
                one_line(r.target, 48),
                one_line(why_asked(r.rule, r.layer, r.act.value), 28),
                one_line(r.goal, 36),
                key=item.key,
            )
        if current is not None and current.key in keys:
            table.move_cursor(row=table.get_row_index(current.key))
        self._hint()

    def _current(self) -> QueueItem | None:
        table = self.query_one(DataTable)
        if not self.items or table.cursor_row >= len(self.items):
            return None
        return self.items[table.cursor_row]

    def on_data_table_row_selected(self, _: DataTable.RowSelected) -> None:
        """Enter on the table (the table takes enter before the screen's binding)."""
        self.action_answer()

    def on_data_table_row_highlighted(self, _: DataTable.RowHighlighted) -> None:
        """The hint follows the cursor."""
        self._hint()

    def _similar(self, item: QueueItem) -> list[QueueItem]:
        key = similarity_key(item.request.act, item.request.target)
        return [
            i
            for i in self.items
            if i.where in BATCHED and similarity_key(i.request.act, i.request.target) == key
        ]

    def _hint(self) -> None:
        hint = self.query_one("#queue-hint", Static)
        item = self._current()
        if item is None:
            hint.update("Nothing is waiting on you.")
            return
        marked = f"{len(self.marked)} marked · " if self.marked else ""
        if item.where == "crashed":
            hint.update(f"{marked}crashed: enter resumes that run here, and it asks again")
            return
        similar = self._similar(item)
        if len(similar) > 1:
            pattern = suggest_pattern([i.request.target for i in similar])
            hint.update(
                f"{marked}{len(similar)} similar requests: s marks them, then A approves them "
                f"and keeps `{item.request.act.value} allow {pattern}`"
            )
        elif item.where == "deferred":
            hint.update(f"{marked}deferred: enter answers it and resumes that run here")
        elif item.where == "elsewhere":
            hint.update(
                f"{marked}elsewhere: enter answers it; the process driving that run goes on"
            )
        else:
            hint.update(f"{marked}enter answers it · space marks it")

    # -- answers ---------------------------------------------------------------------------------

    def action_answer(self) -> None:
        """Enter: the full modal for the row under the cursor (a crashed run: resume it)."""
        item = self._current()
        if item is None:
            return
        if item.where == "crashed":
            self.post_message(ResumeRequested(item.root_run_id))
            return
        wide = self.app.size.width >= SPLIT_FROM
        # A stored request's modal must not stop this app's run on esc: it leaves it pending.
        kind = ApprovalModal if item.where == "waiting" else StoredApprovalModal
        modal = kind(item.request, remember_file=self.remember_file, wide=wide)
        self.app.push_screen(modal, callback=partial(self._answered, item))

    def _answered(self, item: QueueItem, decision: Decision | None) -> None:
        if decision is None:
            return
        if item.where == "waiting":
            self._resolve([item], decision)
        elif decision.kind == "defer":
            return  # a stored request stays pending, as it was
        elif item.where == "deferred":
            self.post_message(ResumeRequested(item.root_run_id, decision))
        else:
            self.run_worker(
                self._answer_elsewhere(item, decision),
                group="queue-answer",
                description="answer a decision through the store",
                exit_on_error=False,
            )

    async def _answer_elsewhere(self, item: QueueItem, decision: Decision) -> None:
        await answer_live(self, self.history, item.request, decision)
        self.action_reload()

    def _resolve(self, items: list[QueueItem], decision: Decision) -> None:
        stored = [i for i in items if i.where != "waiting"]
        for item in items:
            if item.ask is not None and not item.ask.future.done():
                item.ask.future.set_result(decision)
            self.marked.discard(item.key)
        self.refresh_rows()
        if stored and decision.kind != "defer":  # a deferred stored request stays as it is
            self.run_worker(
                self._answer_stored(stored, decision),
                group="queue-answer",
                description="answer stored decisions",
                exit_on_error=False,
            )

    async def _answer_stored(self, items: list[QueueItem], decision: Decision) -> None:
        """Write one answer for several stored requests; each run takes it as `_load` says."""
        landed = await self.history.answer([i.request for i in items], decision, by="queue")
        paused = sorted({i.root_run_id for i in items if i.where == "deferred"})
        named = answer_name(decision)
        said = f"Answered {landed} stored request{'s' if landed != 1 else ''} ({named})"
        if landed < len(items):
            said += f"; {len(items) - landed} had been answered already"
        if paused:
            runs = ", ".join(str(run) for run in paused)
            said += f". Paused runs {runs} take it when resumed (r in the run browser)."
        self.notify(said, timeout=8)
        self.action_reload()

    def _chosen(self) -> list[QueueItem]:
        """The marked rows, or the row under the cursor (not a crashed run's)."""
        if self.marked:
            return [i for i in self.items if i.key in self.marked]
        item = self._current()
        if item is None:
            return []
        if item.where not in BATCHED:
            self.notify("Enter resumes a crashed run, which asks again.", timeout=4)
            return []
        return [item]

    def action_mark(self) -> None:
        """Space: mark or unmark the row (a crashed run's asks again when resumed: not marked)."""
        item = self._current()
        if item is None:
            return
        if item.where not in BATCHED:
            self.notify("A crashed run asks again when resumed: enter resumes it.", timeout=4)
            return
        self.marked ^= {item.key}
        self.refresh_rows()

    def action_mark_similar(self) -> None:
        """s: mark every request similar to the one under the cursor."""
        item = self._current()
        if item is None or item.where not in BATCHED:
            return
        self.marked |= {i.key for i in self._similar(item)}
        self.refresh_rows()

    def action_approve_marked(self) -> None:
        """y: approve the marked requests as asked."""
        self._resolve(self._chosen(), Decision.approve())

    def action_defer_marked(self) -> None:
        """d: park the marked requests (their runs pause once their steps end)."""
        self._resolve(self._chosen(), Decision.defer())

    def action_batch(self, mode: BatchMode) -> None:
        """A / n: one rule (approving what it covers) or one reason, for the marked requests."""
        chosen = self._chosen()
        if not chosen:
            return
        if mode == "remember" and len({i.request.act for i in chosen}) > 1:
            self.notify("A rule is for one act: mark requests of the same act.", severity="warning")
            return
        requests = [i.request for i in chosen]
        self.app.push_screen(BatchModal(requests, mode), callback=partial(self._batched, chosen))

    def _batched(self, chosen: list[QueueItem], answer: tuple[Decision, list[int]] | None) -> None:
        if answer is None:
            return
        decision, ids = answer
        self._resolve([i for i in chosen if i.request.request_id in ids], decision)

    def action_close(self) -> None:
        """Escape: back."""
        self.dismiss(None)

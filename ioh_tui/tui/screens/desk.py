"""DecisionDesk: a run's decisions — the asks waiting, the one modal on screen, the queue hand-off.

The engine's asks arrive at the run screen as `ApprovalNeeded`; the screen hands each to its desk.
One ask is on screen at a time (the oldest); the others wait behind it, or in the decision queue
while it is open. An ask ends when it is answered (here or in the queue) or withdrawn by the
engine (the run stopped, another process answered): its modal then closes and the next one shows.
The desk says what waits through the status line and, up to the app, `WaitingChanged` (posted to
the app itself: the bell should not wait behind the run screen's queue of engine events).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from textual.screen import Screen

from ioh_tui.policy import Decision
from ioh_tui.tui.describe import one_line
from ioh_tui.tui.history import History
from ioh_tui.tui.messages import ApprovalNeeded, WaitingChanged
from ioh_tui.tui.screens.approval import SPLIT_FROM, ApprovalModal
from ioh_tui.tui.screens.queue import DecisionQueueScreen


class DecisionDesk:
    """The decisions of the run shown on `host`."""

    def __init__(
        self,
        host: Screen[Any],
        *,
        history: History,
        remember_file: Path,
        say_waiting: Callable[[str], None],
        run_id: Callable[[], int | None],
    ) -> None:
        self.host = host
        """The run screen: the modals open over it and its messages reach the app."""
        self.history = history
        """Where the queue reads stored decisions from."""
        self.remember_file = remember_file
        """Default file a remembered rule is saved to."""
        self.say_waiting = say_waiting
        """Shows what waits in the status line ("" when nothing does)."""
        self.run_id = run_id
        """The root run's id, once it started (the queue lists its asks as waiting)."""
        self.asks: deque[ApprovalNeeded] = deque()
        """Pending decisions, oldest first; the first is on screen."""
        self.modal: ApprovalModal | None = None
        """The decision on screen, if any."""
        self.queue: DecisionQueueScreen | None = None
        """The decision queue, while it is open."""

    def take(self, message: ApprovalNeeded) -> None:
        """Queue the ask; show it now if nothing else is on screen (or list it in the queue)."""
        self.asks.append(message)
        message.future.add_done_callback(lambda _: self.host.call_later(self._settled, message))
        if self.queue is not None:
            self.queue.refresh_rows()
            self.host.app.post_message(WaitingChanged(f"{len(self.asks)} decisions"))
        elif self.modal is None:
            self._show(message)
        else:
            self.modal.waiting = len(self.asks)

    def _show(self, message: ApprovalNeeded) -> None:
        request = message.request
        waiting = f"{request.act.value} {one_line(request.target, 60)}"
        self.say_waiting(waiting)
        self.host.app.post_message(WaitingChanged(waiting))
        app = self.host.app
        wide = app.size.width >= SPLIT_FROM
        self.modal = ApprovalModal(
            request, remember_file=self.remember_file, wide=wide, waiting=len(self.asks)
        )
        app.push_screen(self.modal, callback=partial(self._answered, message))

    def _answered(self, message: ApprovalNeeded, decision: Decision | None) -> None:
        if decision is not None and not message.future.done():
            message.future.set_result(decision)
        elif decision is None and self.modal is not None and self.modal.to_queue:
            self.modal = None
            self.open_queue()

    def _settled(self, message: ApprovalNeeded) -> None:
        """An ask ended: answered here or in the queue, or withdrawn by the engine."""
        shown = self.modal is not None and self.modal.request is message.request
        if message in self.asks:
            self.asks.remove(message)
        if shown and self.modal is not None:
            modal, self.modal = self.modal, None
            if modal in self.host.app.screen_stack:
                # Withdrawn while its modal is up: close it (and anything opened above it).
                modal.pop_until_active()
                modal.dismiss(None)
        if self.queue is not None:
            self.queue.refresh_rows()
        elif self.modal is None and self.asks:
            self._show(self.asks[0])
        elif self.modal is not None:
            self.modal.waiting = len(self.asks)
        if not self.asks:
            self.say_waiting("")
            self.host.app.post_message(WaitingChanged(None))

    def show_queue(self) -> None:
        """Every pending decision — this run's agents and deferred runs — in one list."""
        if self.queue is not None:
            return
        if self.modal is not None and self.modal in self.host.app.screen_stack:
            self.modal.action_queue()  # its callback opens the queue
            return
        self.open_queue()

    def open_queue(self) -> None:
        """Show the queue; the single-decision modal waits until it is closed."""
        self.queue = DecisionQueueScreen(
            self.history,
            live=lambda: list(self.asks),
            driven_run=self.run_id(),
            remember_file=self.remember_file,
        )
        self.host.app.push_screen(self.queue, callback=self._queue_closed)

    def _queue_closed(self, _: None) -> None:
        self.queue = None
        if self.asks and self.modal is None:
            self._show(self.asks[0])

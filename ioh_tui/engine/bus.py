"""Delivering engine events: to any number of observers, synchronously, never blocking the loop."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterable

from ioh_tui.core.events import Event, TextDelta, ThinkingDelta, ToolOutput, to_json
from ioh_tui.core.redact import Redactor
from ioh_tui.store import LoggedEvent, Store

Observer = Callable[[Event], None]
"""Called with every event, on the loop's task. Must return quickly: queue anything slow."""


log = logging.getLogger(__name__)

BATCH_S = 0.05
"""How long the event log's writer gathers events before writing them (one round trip)."""

_NOT_LOGGED = (TextDelta, ThinkingDelta, ToolOutput)
"""Streamed pieces are not logged one by one: the assembled text is in the transcript."""


class EventBus:
    """Fans events out to observers; a failing observer is logged and never stops the run.

    Every event is handed out with the configured keys masked (`redactor`), so no observer (the
    store's event log, `exec --json`, the app) ever holds one. The engine masks the text it
    stores through the same redactor.
    """

    def __init__(
        self, observers: Iterable[Observer] = (), redactor: Redactor | None = None
    ) -> None:
        self._observers: list[Observer] = []
        self._logs: list[EventLog] = []
        for observer in observers:
            self.subscribe(observer)
        self.redactor = Redactor.configured() if redactor is None else redactor
        """The keys masked from every event and from what the engine stores."""

    def subscribe(self, observer: Observer) -> None:
        """Add an observer."""
        self._observers.append(observer)
        if isinstance(observer, EventLog):
            self._logs.append(observer)

    def take_logged(self) -> list[LoggedEvent]:
        """The events every subscribed `EventLog` holds unwritten, for the caller to write next."""
        return [row for event_log in self._logs for row in event_log.take()]

    def emit(self, event: Event) -> None:
        """Deliver `event` to every observer, in subscription order."""
        event = self.redactor.value(event)
        for observer in self._observers:
            try:
                observer(event)
            except Exception:
                log.exception("an event observer failed on %s", event.kind)


class EventLog:
    """An observer that appends events to the store's event log from a background task.

    `emit` only queues; the writer waits up to `BATCH_S` after an event, then takes everything
    queued at once and writes it in one batch (a tree of agents emits thousands of events, and
    each store call is a thread round trip). A step's commit takes what is queued first
    (`take`) and writes it in its own transaction: in a run whose steps take less than
    `BATCH_S`, the log costs no round trip of its own.
    `drain()` waits until everything queued is written.
    """

    def __init__(self, store: Store) -> None:
        self._store = store
        self._queued: list[Event] = []
        self._stopping = False
        self._task: asyncio.Task[None] | None = None
        self._more: asyncio.Event | None = None
        """Set when an event is queued while the writer waits for the first."""
        self._woken: asyncio.Event | None = None
        """Set while the writer waits for more events; `drain` sets it to end the wait."""

    def __call__(self, event: Event) -> None:
        """Queue one event (streamed pieces are skipped)."""
        if isinstance(event, _NOT_LOGGED):
            return
        if self._task is None:
            self._more = asyncio.Event()
            self._stopping = False
            self._task = asyncio.get_running_loop().create_task(self._writer(), name="event-log")
        self._queued.append(event)
        if self._more is not None:
            self._more.set()

    def take(self) -> list[LoggedEvent]:
        """Everything queued and not yet being written, as `add_events` rows, in order.

        Whoever takes them writes them next: the store's lock is first come, first served, so
        a batch the writer took before is written before them, and anything queued after is
        written after.
        """
        taken, self._queued = self._queued, []
        return [(e.run_id, e.agent_id, e.kind, to_json(e)) for e in taken]

    async def _writer(self) -> None:
        more = self._more
        assert more is not None
        while True:
            if not self._queued and not self._stopping:
                more.clear()
                await more.wait()
            if self._queued and not self._stopping:
                # A step's events come a few at a time. Waiting a moment writes them, and a fast
                # run's next steps', in one round trip to the store's thread (a step made four
                # of them for its events alone). Nothing waits on the log; `drain` ends the wait.
                await self._more_or_drain()
            rows = self.take()
            if rows:
                try:
                    await self._store.add_events(rows)
                except Exception:
                    log.exception("could not log %d events", len(rows))
            if self._stopping and not self._queued:
                return

    async def _more_or_drain(self) -> None:
        self._woken = woken = asyncio.Event()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(woken.wait(), BATCH_S)
        self._woken = None

    async def drain(self) -> None:
        """Write everything queued so far, then stop the writer."""
        task, self._task = self._task, None
        if task is None or task.done():  # never started, or cancelled with its loop
            return
        self._stopping = True
        if self._more is not None:
            self._more.set()
        if self._woken is not None:
            self._woken.set()
        await task

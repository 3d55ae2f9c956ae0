"""The bridge between the engine and the run screen: the observer and the approver.

The engine never sees a widget. It calls `EventForwarder` (an observer) with each event, which
holds it and returns at once; the events held are posted together, as one `EngineEventMessage`
(see `BATCH_S`). It asks `TuiApprover`, which posts an `ApprovalNeeded` carrying a future and
awaits it. `supervisor.drive` hands both to the engine.

Everything crosses here made safe to draw (`core/shown.py`): the model chooses most of an event's
strings, and a widget must never hold an escape sequence (issue 18, item 8) or a key (item 9).
"""

from __future__ import annotations

import asyncio
import dataclasses

from textual.message_pump import MessagePump

from ioh_tui.core.events import Event, RunFinished, TextDelta, ThinkingDelta
from ioh_tui.core.redact import Redactor
from ioh_tui.core.shown import drawable
from ioh_tui.policy import ApprovalRequest, Decision
from ioh_tui.tui.messages import ApprovalNeeded, EngineEventMessage

BATCH_S = 0.05
"""The engine's events are posted at most this often, together in one message.

Ten agents at once make hundreds of events a second, and each Textual message costs about half a
millisecond to post and dispatch (0.4-1 ms measured on a loaded 2-core machine). Worse, the run
screen redraws only once its queue is empty, so one message an event kept it from drawing (and a
key's effect from showing) while events kept coming (benchmarks/bench_tui_tree.py). The screen
shows events once a frame (`RunScreen.frame`, every 0.1 s): gathering for 50 ms delays nothing a
person sees by more than a frame. A model's streamed pieces are joined while held."""

Delta = TextDelta | ThinkingDelta
Stream = tuple[type[Delta], int, int | None, int]
"""A stream of pieces: its kind, run, agent and step."""


class EventForwarder:
    """An engine observer that posts events to `target` in batches; it never blocks.

    A batch keeps the engine's order. The pieces of one stream are joined while no other event
    comes between them (streams of different agents or steps go to different blocks, so their
    order between them does not matter). `flush` posts what is held at once: the approver calls
    it before it asks, and the root's `RunFinished` is not held.
    """

    def __init__(self, target: MessagePump) -> None:
        self._target = target
        self._redactor = Redactor.configured()
        self._batch: list[Event | tuple[Delta, list[str]]] = []
        self._open: dict[Stream, list[str]] = {}
        """The pieces of each stream still being joined (its entry in `_batch`)."""
        self._timer: asyncio.TimerHandle | None = None

    def __call__(self, event: Event) -> None:
        """Take one event; it is posted within `BATCH_S`."""
        if isinstance(event, TextDelta | ThinkingDelta):
            stream = (type(event), event.run_id, event.agent_id, event.step)
            if (texts := self._open.get(stream)) is None:
                texts = self._open[stream] = []
                self._batch.append((event, texts))
            texts.append(event.text)
        else:
            self._open.clear()  # pieces after this event follow it
            self._batch.append(event)
            if isinstance(event, RunFinished) and event.parent_id is None:
                self.flush()  # the end is shown without waiting
                return
        if self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(BATCH_S, self.flush)

    def flush(self) -> None:
        """Post what is held, in one message, made drawable."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        batch, self._batch = self._batch, []
        self._open.clear()
        if not batch:
            return
        # post_message only appends to the target's queue, so the engine's loop never waits on
        # rendering; the screen drains the queue at its own pace. Joined pieces are made safe
        # together, so an escape sequence split between two pieces is caught too.
        events = [
            drawable(
                dataclasses.replace(entry[0], text="".join(entry[1]))
                if isinstance(entry, tuple)
                else entry,
                self._redactor,
            )
            for entry in batch
        ]
        self._target.post_message(EngineEventMessage(events))


class TuiApprover:
    """An `Approver` that asks the person at the screen and waits as long as it takes."""

    def __init__(self, target: MessagePump, events: EventForwarder | None = None) -> None:
        self._target = target
        self._events = events
        """The run's events, posted before each ask so the screen sees them first."""

    async def decide(self, request: ApprovalRequest) -> Decision:
        """Post the request with a future, then wait for the modal's answer.

        If the engine stops waiting (the run was cancelled, or another process answered), the
        await is cancelled, which cancels the future; the screen sees that and closes the modal.
        """
        if self._events is not None:
            self._events.flush()
        future: asyncio.Future[Decision] = asyncio.get_running_loop().create_future()
        # The person sees (and may edit) the request as drawn: an act whose target holds control
        # characters is shown with them escaped, and a rewrite starts from that text.
        self._target.post_message(ApprovalNeeded(drawable(request), future))
        return await future

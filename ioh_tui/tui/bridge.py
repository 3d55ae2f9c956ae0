"""The bridge between the engine and the run screen: the observer and the approver.

The engine never sees a widget. It calls `EventForwarder` (an observer) with each event, which
posts an `EngineEventMessage` and returns at once (streamed text is gathered first: see
`STREAM_S`); it asks `TuiApprover`, which posts an `ApprovalNeeded` carrying a future and awaits
it. `supervisor.drive` hands both to the engine.

Everything crosses here made safe to draw (`core/shown.py`): the model chooses most of an event's
strings, and a widget must never hold an escape sequence (issue 18, item 8) or a key (item 9).
"""

from __future__ import annotations

import asyncio
import dataclasses

from textual.message_pump import MessagePump

from ioh_tui.core.events import Event, TextDelta, ThinkingDelta
from ioh_tui.core.redact import Redactor
from ioh_tui.core.shown import drawable
from ioh_tui.policy import ApprovalRequest, Decision
from ioh_tui.tui.messages import ApprovalNeeded, EngineEventMessage

STREAM_S = 0.05
"""Streamed text is posted at most this often, a stream's pieces joined into one delta.

A model streams a piece every few hundred microseconds, and each Textual message costs about that
much to post and dispatch (0.4-1 ms measured on a loaded 2-core machine), so one message a piece
made the app several times slower than the engine (benchmarks/bench_tui_stream.py). The screen
shows events once a frame (`RunScreen.frame`, every 0.1 s): gathering for 50 ms delays nothing a
person sees by more than a frame."""

Delta = TextDelta | ThinkingDelta
Stream = tuple[type[Delta], int, int | None, int]
"""A stream of pieces: its kind, run, agent and step."""


class EventForwarder:
    """An engine observer that posts events to `target` as messages; it never blocks.

    Every event but a streamed piece is posted at once, as its own message, after the pieces
    held so far: the screen sees the engine's order. Pieces of one stream are joined while held
    (streams of different agents or steps go to different blocks, so their order between them
    does not matter).
    """

    def __init__(self, target: MessagePump) -> None:
        self._target = target
        self._redactor = Redactor.configured()
        self._held: dict[Stream, tuple[Delta, list[str]]] = {}
        self._timer: asyncio.TimerHandle | None = None

    def __call__(self, event: Event) -> None:
        """Forward one event, made drawable (a streamed piece within `STREAM_S`)."""
        if isinstance(event, TextDelta | ThinkingDelta):
            stream = (type(event), event.run_id, event.agent_id, event.step)
            if (held := self._held.get(stream)) is None:
                self._held[stream] = (event, [event.text])
            else:
                held[1].append(event.text)
            if self._timer is None:
                self._timer = asyncio.get_running_loop().call_later(STREAM_S, self.flush)
            return
        self.flush()
        self._post(event)

    def flush(self) -> None:
        """Post the pieces held so far, one message a stream."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        held, self._held = self._held, {}
        for first, texts in held.values():
            self._post(dataclasses.replace(first, text="".join(texts)))

    def _post(self, event: Event) -> None:
        # post_message only appends to the target's queue, so the engine's loop never waits on
        # rendering; the screen drains the queue at its own pace. Joined pieces are made safe
        # together, so an escape sequence split between two pieces is caught too.
        self._target.post_message(EngineEventMessage(drawable(event, self._redactor)))


class TuiApprover:
    """An `Approver` that asks the person at the screen and waits as long as it takes."""

    def __init__(self, target: MessagePump) -> None:
        self._target = target

    async def decide(self, request: ApprovalRequest) -> Decision:
        """Post the request with a future, then wait for the modal's answer.

        If the engine stops waiting (the run was cancelled, or another process answered), the
        await is cancelled, which cancels the future; the screen sees that and closes the modal.
        """
        future: asyncio.Future[Decision] = asyncio.get_running_loop().create_future()
        # The person sees (and may edit) the request as drawn: an act whose target holds control
        # characters is shown with them escaped, and a rewrite starts from that text.
        self._target.post_message(ApprovalNeeded(drawable(request), future))
        return await future

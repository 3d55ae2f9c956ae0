"""The bridge between the engine and the run screen: the observer and the approver.

The engine never sees a widget. It calls `EventForwarder` (an observer) with each event, which
posts one `EngineEventMessage` and returns at once; it asks `TuiApprover`, which posts an
`ApprovalNeeded` carrying a future and awaits it. `supervisor.drive` hands both to the engine.

Everything crosses here made safe to draw (`core/shown.py`): the model chooses most of an event's
strings, and a widget must never hold an escape sequence (issue 18, item 8) or a key (item 9).
"""

from __future__ import annotations

import asyncio

from textual.message_pump import MessagePump

from ioh_tui.core.events import Event
from ioh_tui.core.redact import Redactor
from ioh_tui.core.shown import drawable
from ioh_tui.policy import ApprovalRequest, Decision
from ioh_tui.tui.messages import ApprovalNeeded, EngineEventMessage


class EventForwarder:
    """An engine observer that posts each event to `target` as one message; it never blocks."""

    def __init__(self, target: MessagePump) -> None:
        self._target = target
        self._redactor = Redactor.configured()

    def __call__(self, event: Event) -> None:
        """Forward one event, made drawable."""
        # post_message only appends to the target's queue, so the engine's loop never waits on
        # rendering; the screen drains the queue at its own pace.
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

"""UI messages shared across screens: the one wrapper for engine events, and a pending decision."""

from __future__ import annotations

import asyncio

from textual.message import Message

from ioh_tui.core.events import Event
from ioh_tui.policy import ApprovalRequest, Decision


class EngineEventMessage(Message):
    """One engine event, delivered to the run screen in the order the engine emitted it."""

    bubble = False
    """Only the run screen consumes engine events; nothing above it needs them."""

    def __init__(self, event: Event) -> None:
        super().__init__()
        self.event = event
        """The engine event, unchanged."""


class ApprovalNeeded(Message):
    """The engine waits on a person: show `request`, then resolve `future` with the answer."""

    bubble = False

    def __init__(self, request: ApprovalRequest, future: asyncio.Future[Decision]) -> None:
        super().__init__()
        self.request = request
        """What is asked, exactly as stored."""
        self.future = future
        """Resolved with the decision; cancelled by the engine if the ask goes away first."""

"""UI messages: engine events and asks down to the run screen, the screens' intents up to the app.

Screens never call the app: they post one of the messages below, which bubble to `IohApp`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from textual.message import Message

if TYPE_CHECKING:  # the start screen posts these before anything of a run is imported
    from ioh_tui.core.events import Event
    from ioh_tui.policy import ApprovalRequest, Decision


class EngineEventMessage(Message):
    """Engine events, delivered to the run screen in the order the engine emitted them."""

    bubble = False
    """Only the run screen consumes engine events; nothing above it needs them."""

    def __init__(self, events: list[Event]) -> None:
        super().__init__()
        self.events = events
        """The events, made drawable (`core/shown.py`), oldest first."""


class ApprovalNeeded(Message):
    """The engine waits on a person: show `request`, then resolve `future` with the answer."""

    bubble = False

    def __init__(self, request: ApprovalRequest, future: asyncio.Future[Decision]) -> None:
        super().__init__()
        self.request = request
        """What is asked, exactly as stored."""
        self.future = future
        """Resolved with the decision; cancelled by the engine if the ask goes away first."""


# -- screens to the app (attributes down, messages up) ------------------------------------------


class RunEnded(Message):
    """The root run finished (its last event arrived); the app retitles the terminal."""

    def __init__(self, outcome: str) -> None:
        super().__init__()
        self.outcome = outcome
        """The run's outcome."""


class StopRequested(Message):
    """Stop the running run now (its outcome is `cancelled`)."""


class BudgetRaiseRequested(Message):
    """Raise one budget of the running run; the engine takes it at its next budget check."""

    def __init__(self, name: str, limit: float) -> None:
        super().__init__()
        self.name = name
        """The budget (`max_steps`, `time_budget_s`, `token_budget`, `max_total_tokens`)."""
        self.limit = limit
        """Its new limit."""


class ResumeRequested(Message):
    """Continue a paused or crashed run in a fresh run view, answering its decision first."""

    def __init__(
        self,
        run_id: int,
        decision: Decision | None = None,
        overrides: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__()
        self.run_id = run_id
        """The root run to resume."""
        self.decision = decision
        """The answer to its pending decision; None asks it again."""
        self.overrides: Mapping[str, Any] = overrides or {}
        """Raised budgets (a run stopped at its budget first offers to raise it)."""


class DemoRequested(Message):
    """Drive the built-in demo."""


class WaitingChanged(Message):
    """A decision now waits on the person (ring, retitle, notify), or none does any more."""

    def __init__(self, what: str | None) -> None:
        super().__init__()
        self.what = what
        """What waits, in a few words; None when nothing does."""

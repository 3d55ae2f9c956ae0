"""A compaction in the transcript: the step its context was folded at, and how much room it made."""

from __future__ import annotations

from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.events import Click
from textual.message import Message
from textual.widgets import Static


class Compaction(Static, can_focus=True):
    """`context compacted at step 12: 14,200 → 6,100 tokens`; Enter (or a click) opens the summary.

    The summary itself is in the store (`summaries`), read when it is asked for.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "enter,space",
            "open_summary",
            "Summary",
            tooltip="Read the summary that replaced the older turns (from the store)",
        ),
    ]
    """Enter (or space) on the focused block opens its summary."""

    class Opened(Message):
        """The summary of a compaction was asked for."""

        def __init__(self, compaction: Compaction) -> None:
            super().__init__()
            self.compaction = compaction

    def __init__(
        self, *, run_id: int, step: int, before: int, after: int, agent: int | None = None
    ) -> None:
        super().__init__(_line(step, before, after), classes="note -compacted", markup=False)
        self.run_id = run_id
        """The run (the agent's own, in a tree) whose summary this is."""
        self.step = step
        """The step whose request needed the room."""
        self.before = before
        """Tokens of the request before the compaction (the engine's count)."""
        self.after = after
        """Tokens after it."""
        self.agent = agent
        """The sub-agent's run id; None for the root."""

    def describe(self) -> str:
        """The block's line."""
        return _line(self.step, self.before, self.after)

    def action_open_summary(self) -> None:
        """Ask the screen for the summary."""
        self.post_message(self.Opened(self))

    def on_click(self, event: Click) -> None:
        """A click opens it too."""
        event.stop()
        self.focus()
        self.action_open_summary()


def _line(step: int, before: int, after: int) -> str:
    return f"context compacted at step {step}: {before:,} → {after:,} tokens"

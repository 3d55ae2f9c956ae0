"""SummaryModal: the summary that replaced a run's older turns when its context was compacted."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from ioh_tui.tui.describe import visible
from ioh_tui.tui.styles import stylesheet


class SummaryModal(ModalScreen[None]):
    """One compaction: where and how much, then the summary as the model wrote it."""

    CSS_PATH = stylesheet("summary")
    AUTO_FOCUS = "#summary-text"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,c,q", "close", "Close"),
    ]
    """Any of these closes the summary (escape here does not stop the run)."""

    def __init__(self, *, heading: str, summary: str | None, turns: int | None = None) -> None:
        super().__init__()
        self.heading = heading
        """Where the compaction happened and how much room it made."""
        self.summary = summary
        """The summary text from the store; None when the store has none for it."""
        self.turns = turns
        """How many of the run's first turns it stands for."""

    def compose(self) -> ComposeResult:
        """The heading, how many turns it stands for, and the scrollable summary."""
        with Vertical(id="summary-box"):
            yield Static(self.heading, id="summary-heading", markup=False)
            stands = (
                f"it stands for the run's first {self.turns} turn(s)"
                if self.turns is not None
                else "no summary of it is in the store"
            )
            yield Static(stands, id="summary-turns", markup=False)
            with VerticalScroll(id="summary-text"):
                # The model wrote it: control characters are shown as escapes, never sent.
                shown, _ = visible(self.summary) if self.summary else ("(none)", 0)
                yield Static(shown, markup=False)
            yield Static("esc / c closes", id="summary-keys", markup=False)

    def action_close(self) -> None:
        """Back to the run."""
        self.dismiss(None)

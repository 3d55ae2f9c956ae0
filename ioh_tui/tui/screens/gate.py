"""GateModal: the verification gate's evidence — state, command, and the tail of its output."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from ioh_tui.tui.describe import visible
from ioh_tui.tui.styles import stylesheet


class GateModal(ModalScreen[None]):
    """The last check of the success criterion, in full."""

    CSS_PATH = stylesheet("gate")
    AUTO_FOCUS = "#gate-output"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,g,q", "close", "Close"),
    ]
    """Any of these closes the evidence (escape here does not stop the run)."""

    def __init__(self, *, state: str, criterion: str, detail: str, attempts: int) -> None:
        super().__init__()
        self.state = state
        """The gate's state when opened."""
        self.criterion = criterion
        """What the gate checks."""
        self.detail = detail
        """Exit status and output tail of the last check."""
        self.attempts = attempts
        """How many checks ran."""

    def compose(self) -> ComposeResult:
        """State, criterion, and the scrollable evidence."""
        with Vertical(id="gate-box"):
            yield Static(
                f"gate: {self.state} (checks run: {self.attempts})", id="gate-state", markup=False
            )
            yield Static(self.criterion or "no criterion", id="gate-criterion", markup=False)
            with VerticalScroll(id="gate-output"):
                shown, _ = visible(self.detail) if self.detail else ("(not checked yet)", 0)
                yield Static(shown, markup=False)
            yield Static("esc / g closes", id="gate-keys", markup=False)

    def action_close(self) -> None:
        """Back to the run."""
        self.dismiss(None)

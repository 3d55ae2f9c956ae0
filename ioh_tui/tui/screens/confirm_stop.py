"""ConfirmStopModal: stopping a run is asked once more, so one stray Esc never throws it away."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

from ioh_tui.tui.styles import stylesheet

QUESTION = "Stop the run now? Its outcome will be cancelled (every committed step is kept)."
ANSWERS = "y or enter stops it · n or esc keeps it going"


class ConfirmStopModal(ModalScreen[bool]):
    """Asks whether to stop the run; True stops it, False keeps it."""

    CSS_PATH = stylesheet("confirm_stop")
    AUTO_FOCUS = ""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y,enter", "answer(True)", "Stop run", tooltip="Stop the run (outcome cancelled)"),
        Binding("n,escape", "answer(False)", "Keep going", tooltip="Keep the run going"),
        Binding("f1,question_mark", "app.help", "Help", show=False),
    ]
    """Stopping needs a deliberate key; the key that opened this (escape) keeps the run."""

    def compose(self) -> ComposeResult:
        """The question and its answers."""
        with Vertical(id="stop-box"):
            yield Static(QUESTION, id="stop-question", markup=False)
            yield Static(ANSWERS, id="stop-answers", markup=False)

    def action_answer(self, stop: bool) -> None:
        """y/enter stops, n/esc keeps the run."""
        self.dismiss(stop)

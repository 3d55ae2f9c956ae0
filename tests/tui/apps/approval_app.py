"""A harness app showing one `ApprovalModal` on its own, keeping the decision it returns."""

from __future__ import annotations

from pathlib import Path, PurePath
from typing import ClassVar

from textual.app import App, ComposeResult
from textual.widgets import Static

from ioh_tui.policy import ApprovalRequest, Decision
from ioh_tui.tui.screens.approval import ApprovalModal
from ioh_tui.tui.styles import stylesheet


class ApprovalApp(App[None]):
    """Pushes the modal on mount; `decision` holds its answer once dismissed."""

    CSS_PATH: ClassVar[list[str | PurePath]] = [stylesheet("base"), stylesheet("app")]

    def __init__(
        self, request: ApprovalRequest, *, remember_file: Path, wide: bool = False
    ) -> None:
        super().__init__()
        self.request = request
        self.remember_file = remember_file
        self.wide = wide
        self.decision: Decision | None = None
        self.stopped = False

    def compose(self) -> ComposeResult:
        yield Static("behind the modal")

    def on_mount(self) -> None:
        self.animation_level = "none"
        modal = ApprovalModal(self.request, remember_file=self.remember_file, wide=self.wide)
        self.push_screen(modal, callback=self._answered)

    def _answered(self, decision: Decision | None) -> None:
        self.decision = decision

    def action_stop_run(self) -> None:
        """What the real app does when asked to stop the run: here, only noted."""
        self.stopped = True

"""The verification gate as visible state: not run / running / passed / failed, and its command."""

from __future__ import annotations

from typing import Literal

from rich.text import Text
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget

from ioh_tui.tui.describe import gate_command

GateState = Literal["none", "not run", "running", "passed", "failed", "errored"]

_GLYPHS: dict[str, str] = {
    "none": "–",
    "not run": "○",
    "running": "◐",
    "passed": "●",
    "failed": "✗",
    "errored": "!",
}
"""A glyph per state, so the state reads without colour."""


class GateStatus(Widget):
    """The run's success criterion: its state, its command, and (one key away) its evidence."""

    state: reactive[GateState] = reactive("none")
    """Where the gate is; `none` when the run has no criterion."""
    criterion: reactive[str] = reactive("")
    """The criterion's description (its command is shown)."""
    detail: reactive[str] = reactive("")
    """The last check's evidence: exit status and output tail."""

    class Changed(Message):
        """The gate moved to another state."""

        def __init__(self, state: GateState) -> None:
            super().__init__()
            self.state = state
            """Where the gate is now."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, classes="-none")
        self.attempts = 0
        """How many checks finished."""

    @property
    def command(self) -> str:
        """The command the gate runs, or the criterion when it is not a command."""
        return gate_command(self.criterion)

    def configure(self, criterion: str | None) -> None:
        """Set the criterion before the run starts (None: there is no gate)."""
        self.criterion = criterion or ""
        self.state = "not run" if criterion else "none"

    def started(self, criterion: str) -> None:
        """A check began."""
        self.criterion = criterion
        self.state = "running"

    def finished(self, status: str, detail: str) -> None:
        """A check ended (`passed`, `failed` or `errored`)."""
        self.detail = detail
        self.attempts += 1
        self.state = status if status in ("passed", "failed", "errored") else "errored"  # type: ignore[assignment]

    def watch_state(self, old: GateState, new: GateState) -> None:
        """Move the state class and say where the gate is now."""
        self.remove_class(f"-{old.replace(' ', '-')}")
        self.add_class(f"-{new.replace(' ', '-')}")
        self.post_message(self.Changed(new))

    def render(self) -> Text:
        """`gate ● passed`, the command, and the key for the evidence."""
        if self.state == "none":
            return Text("gate  – no criterion", style="dim")
        text = Text("gate  ", style="bold")
        text.append(f"{_GLYPHS[self.state]} {self.state}", style="bold")
        if self.attempts:
            text.append(f"  (check {self.attempts})", style="dim")
        if self.size.height >= 2:
            text.append("\n")
            text.append(self.command, style="italic")
            text.append("\n")
            text.append("g", style="bold")
            text.append(" shows the output", style="dim")
        return text

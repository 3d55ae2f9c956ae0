"""TrustModal: a project section the user has not agreed to, shown whole before the run starts.

A cloned repository's `.ioh-tui/config.toml` can widen the policy, run hooks at every tool call,
start MCP servers and send the provider's key elsewhere; its `.ioh-tui/policy.toml` can allow what
would be asked. None of it is used before the person has read it: u uses it (and remembers the
agreement for exactly this text), l or esc leaves it out of this run (it is shown again next time).
"""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from ioh_tui.config.trust import section_risk
from ioh_tui.tui.app_run import ProjectSection
from ioh_tui.tui.describe import visible
from ioh_tui.tui.styles import stylesheet

ANSWERS = "u use it (and remember that you agreed) · l leave it out of this run"
"""Both answers, written on the modal."""


class TrustModal(ModalScreen[bool]):
    """Shows one `ProjectSection`; returns True to use it, False to leave it out."""

    CSS_PATH = stylesheet("trust")
    AUTO_FOCUS = "#trust-body"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("u", "answer(True)", "Use", tooltip="Use it in this run and in later ones"),
        Binding("l", "answer(False)", "Leave out", tooltip="Run without it; asked again next time"),
        Binding("escape", "answer(False)", "Leave out", show=False),
        Binding("f1,question_mark", "app.help", "Help", show=False),
    ]

    def __init__(self, section: ProjectSection, *, position: tuple[int, int] = (1, 1)) -> None:
        super().__init__()
        self.section = section
        """The section asked about."""
        self._position = position

    def compose(self) -> ComposeResult:
        """Which file, which section, its whole text, and the answers."""
        s = self.section
        n, total = self._position
        count = f" ({n} of {total})" if total > 1 else ""
        with Vertical(id="trust-box"):
            yield Static(
                f"This project's file sets {s.title}{count}: use it?",
                id="trust-title",
                markup=False,
            )
            yield Static(str(s.file), id="trust-file", markup=False)
            yield Static(
                f"A project can come from anyone, and {section_risk(s.kind)}: read it first.",
                id="trust-why",
                markup=False,
            )
            with VerticalScroll(id="trust-body"):
                yield Static(visible(s.body)[0], id="trust-text", markup=False)
            yield Static(ANSWERS, id="trust-answers", markup=False)

    def action_answer(self, use: bool) -> None:
        """U uses the section; l (or esc) leaves it out."""
        self.dismiss(use)

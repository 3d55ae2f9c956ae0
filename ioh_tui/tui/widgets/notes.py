"""Notes: the notes an agent keeps with the `note` tool, one agent's at a time, newest last."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from ioh_tui.engine.prompts import NOTES_SHOWN

Agent = int | None
"""A sub-agent's run id; None for the root."""


class Notes(VerticalScroll):
    """The side panel's notes section: live from `note_added`, restored from the store on resume.

    Each agent's notes are kept; the section shows the chosen agent's (the root's by default):
    the newest `NOTES_SHOWN`, the ones the model is given each turn, and how many older ones there
    are (a day-long run may keep thousands, and each note redraws the section).
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.agent: Agent = None
        """The agent whose notes are shown."""
        self._live: dict[Agent, list[str]] = {}
        """Notes that arrived as events during this drive."""
        self._stored: dict[Agent, list[str]] = {}
        """Notes an agent kept before this drive (a resumed run's, read from the store)."""

    def compose(self) -> ComposeResult:
        """One block of text (a note may fold over several lines)."""
        yield Static("", classes="notes--text", markup=False)

    def on_mount(self) -> None:
        """Titled on its border, like the workspace panes."""
        self._draw()

    def add(self, agent: Agent, text: str) -> None:
        """A note the agent just kept."""
        self._live.setdefault(agent, []).append(text)
        if agent == self.agent and self.is_mounted:
            self._draw()

    def restore(self, agent: Agent, stored: list[str]) -> None:
        """The notes an agent kept before this drive (they come before the live ones)."""
        self._stored[agent] = list(stored)
        if agent == self.agent and self.is_mounted:
            self._draw()

    def of(self, agent: Agent) -> list[str]:
        """Every note an agent kept, oldest first."""
        return [*self._stored.get(agent, []), *self._live.get(agent, [])]

    def show_agent(self, agent: Agent) -> None:
        """Show this agent's notes (None: the root's)."""
        if agent != self.agent:
            self.agent = agent
            if self.is_mounted:
                self._draw()

    def _draw(self) -> None:
        notes = self.of(self.agent)
        who = "" if self.agent is None else f" · agent {self.agent}"
        self.border_title = f"notes{who} ({len(notes)})" if notes else f"notes{who}"
        self.set_class(not notes, "-empty")
        shown = notes[-NOTES_SHOWN:]
        lines = [Text.assemble(("• ", "bold"), note) for note in shown]
        if len(notes) > len(shown):
            lines.insert(0, Text(f"({len(notes) - len(shown)} older notes not shown)", "dim"))
        text = Text("\n").join(lines) if lines else Text("none kept yet")
        self.query_one(".notes--text", Static).update(text)
        self.scroll_end(animate=False)

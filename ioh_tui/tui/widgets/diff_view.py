"""A scrollable view of what an ask would change: a diff (unified or split), content, or a command.

Everything is shown; nothing is cut.
"""

from __future__ import annotations

import asyncio
from typing import Literal

from rich.console import RenderableType
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.reactive import reactive
from textual.widgets import Static

from ioh_tui.tui import highlight

BodyKind = Literal["diff", "content", "command", "none"]

SYNC_LINES = 3000
"""Diffs longer than this are highlighted in a thread, after a plain first paint."""


class DiffView(VerticalScroll, can_focus=True):
    """What the action would do, scrollable in both directions."""

    split: reactive[bool] = reactive(False)
    """Before/after side by side (diffs only)."""

    def __init__(
        self, body: str, kind: BodyKind, *, split: bool = False, id: str | None = None
    ) -> None:
        super().__init__(id=id)
        self.body = body
        """The (already escaped) text to show."""
        self.kind = kind
        """What the body is."""
        self._highlighted: Text | None = None
        self.set_reactive(DiffView.split, split and kind == "diff")

    @property
    def line_count(self) -> int:
        """Lines in the body."""
        return self.body.count("\n") + 1

    def compose(self) -> ComposeResult:
        """One static holding the rendering."""
        yield Static(self._render_body(), classes="diff-view--body")

    def on_mount(self) -> None:
        """Highlight a large diff off the loop (pygments on a huge input would stall the screen)."""
        if self.kind == "diff" and self._highlighted is None and self.line_count > SYNC_LINES:
            self.run_worker(
                self._highlight_later(), group="highlight", description="highlight a large diff"
            )

    async def _highlight_later(self) -> None:
        self._highlighted = await asyncio.to_thread(highlight.unified, self.body)
        if not self.split:
            self.query_one(".diff-view--body", Static).update(self._highlighted)

    def _render_body(self) -> RenderableType:
        if self.kind == "none":
            return Text("(nothing to show)", style="dim")
        if self.kind == "command":
            return Text(self.body, style="bold", overflow="fold")
        if self.kind == "content":
            return highlight.numbered(self.body)
        if self.split:
            return highlight.split(self.body)
        if self._highlighted is None and self.line_count <= SYNC_LINES:
            self._highlighted = highlight.unified(self.body)
        return self._highlighted if self._highlighted is not None else highlight.plain(self.body)

    def watch_split(self) -> None:
        """Re-render in the other layout."""
        self.set_class(self.split, "-split")
        if self.is_mounted:
            self.query_one(".diff-view--body", Static).update(self._render_body())

    def toggle(self) -> None:
        """Switch between unified and split (diffs only)."""
        if self.kind == "diff":
            self.split = not self.split

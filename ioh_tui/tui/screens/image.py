"""ImageModal: a tool call's images at the pane's size (`i` on the call), one at a time."""

from __future__ import annotations

import asyncio
import sqlite3
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Container, Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

from ioh_tui.core.transcript import Image
from ioh_tui.store.errors import StoreError
from ioh_tui.tui.pictures import PictureError, Stored, cells, scaled
from ioh_tui.tui.styles import stylesheet
from ioh_tui.tui.widgets.image_view import graphics


class ImageModal(ModalScreen[None]):
    """One image as large as the pane allows, its line above it; ←/→ for the call's others."""

    CSS_PATH = stylesheet("image")

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,i,q", "close", "Close"),
        Binding("left", "turn(-1)", "Previous", show=False),
        Binding("right", "turn(1)", "Next", show=False),
    ]
    """Any of the first closes the view (escape here does not stop the run)."""

    def __init__(self, stored: Stored, lines: list[str]) -> None:
        super().__init__()
        self.stored = stored
        """Where the call's images are in the store."""
        self.lines = lines
        """A line per image (name, bytes, dimensions), as the transcript shows it."""
        self.index = 0
        """The image shown."""
        self._images: tuple[Image, ...] | None = None
        """The call's images, read once the view opens (dropped with it)."""

    def compose(self) -> ComposeResult:
        """The image's line, the frame it is drawn in, and the keys."""
        with Vertical(id="image-box"):
            yield Static(self._heading(), id="image-heading", markup=False)
            with Container(id="image-frame"):
                # Until the step is committed (the store has the image) and it is scaled.
                yield Static("reading the image from the store…", markup=False)
            keys = "esc closes" + (" · ←/→ the call's other images" if len(self.lines) > 1 else "")
            yield Static(keys, id="image-keys", markup=False)

    def _heading(self) -> str:
        if not self.lines:
            return ""
        return f"{self.index + 1}/{len(self.lines)}  {self.lines[self.index]}"

    def on_mount(self) -> None:
        """Draw the first image once the frame has its size."""
        self.call_after_refresh(self._redraw)

    def _redraw(self) -> None:
        self.run_worker(self._draw(), group="image", exclusive=True, exit_on_error=False)

    async def _draw(self) -> None:
        frame = self.query_one("#image-frame", Container)
        drawing = graphics()
        if drawing is None:
            return
        try:
            if self._images is None:
                self._images = await self.stored.images()
            image = self._images[self.index]
        except (StoreError, sqlite3.Error, OSError, IndexError):
            await frame.remove_children()
            await frame.mount(Static("(the store has no such image)", markup=False))
            return
        size = frame.content_size
        cols, rows = cells(
            image.width,
            image.height,
            cols=max(size.width, 1),
            rows=max(size.height, 1),
            aspect=drawing.aspect,
        )
        try:
            picture = await asyncio.to_thread(scaled, image, drawing.box(cols, rows))
        except PictureError as exc:
            await frame.remove_children()
            await frame.mount(Static(str(exc), markup=False))
            return
        await frame.remove_children()
        await frame.mount(drawing.draw(picture, cols, rows, "image-full"))

    def action_turn(self, by: int) -> None:
        """←/→: the call's previous or next image."""
        if len(self.lines) < 2:
            return
        self.index = (self.index + by) % len(self.lines)
        self.query_one("#image-heading", Static).update(self._heading())
        self._redraw()

    def action_close(self) -> None:
        """Back to the run."""
        self.dismiss(None)

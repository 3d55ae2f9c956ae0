"""The images a tool call attached, drawn under its line (textual-image, the `graphics` extra).

Kitty's graphics protocol or Sixel where the terminal answers that it draws them, else coloured
half blocks (two pixels a cell), which every terminal and the browser (`ioh-tui web`) show.
Without the extra each image stays a text line (name, bytes, dimensions) and the first one says
which extra draws it. The bytes are read from the store once the call's step is committed
(`tui/pictures.py`), decoded and scaled in a thread, and only the small copy is kept; `i` on the
call opens the full-size view (`screens/image.py`), which reads the image again.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Static

from ioh_tui.dbfile.errors import StoreError  # the same class; the store package loads later
from ioh_tui.tui.pictures import PictureError, Stored, cells, scaled

if TYPE_CHECKING:
    from PIL.Image import Image as PilImage

EXTRA = "ioh-tui[graphics]"
HINT = f"(images are drawn in the terminal with: pip install '{EXTRA}')"
"""Said under the first image a run view shows as text for want of the extra."""
THUMB_ROWS = 8
"""The most rows an image takes in the transcript; `i` shows it at the pane's size."""


@dataclass(frozen=True, slots=True)
class Graphics:
    """How this terminal draws images: textual-image's widget, and the pixels of one cell."""

    widget: Callable[..., Widget]
    """textual-image's widget class (takes a Pillow image; its size is set in cells)."""
    per_cell: tuple[int, int]
    """The pixels one cell shows, across and down (half blocks: 1 x 2)."""
    aspect: float
    """How many times taller than wide a cell is on the screen."""

    def draw(self, picture: PilImage, cols: int, rows: int, classes: str) -> Widget:
        """The widget drawing `picture` in `cols` x `rows` cells."""
        widget = self.widget(picture, classes=classes)
        widget.styles.width = cols
        widget.styles.height = rows
        return widget

    def box(self, cols: int, rows: int) -> tuple[int, int]:
        """The pixels `cols` x `rows` cells show: the size to scale an image to."""
        return cols * self.per_cell[0], rows * self.per_cell[1]


_loaded: Graphics | Literal["missing", "text", "unloaded"] = "unloaded"
"""How images are drawn; "missing": the extra is not installed; "text": it failed to load."""


def prepare() -> None:
    """Load textual-image before the app starts (`launch`).

    On import it asks the terminal whether it draws Sixel or Kitty graphics, reading the answer
    from the keyboard's stream: once Textual reads that stream, the answer would be lost.
    """
    global _loaded
    if _loaded != "unloaded":
        return
    # A terminal that does not answer its questions is logged as a warning with a traceback,
    # which Python's last-resort handler would print over the terminal before the app starts.
    logging.getLogger("textual_image").addHandler(logging.NullHandler())
    try:
        from textual_image import renderable
        from textual_image._terminal import get_cell_size  # the widgets' own measure
        from textual_image.widget import HalfcellImage
        from textual_image.widget import Image as BestImage
    except ImportError:
        _loaded = "missing"
        return
    except Exception:  # its import asks the terminal, and fails on some (a pty of no size)
        _loaded = "text"
        return
    cell = get_cell_size()
    aspect = cell.height / cell.width if cell.width else 2.0
    if renderable.Image in (renderable.SixelImage, renderable.TGPImage):
        _loaded = Graphics(BestImage, (cell.width, cell.height), aspect)
    else:
        # Not textual-image's grey-shade fallback (what it picks without a terminal): colour.
        _loaded = Graphics(HalfcellImage, (1, 2), aspect)


def graphics() -> Graphics | None:
    """How images are drawn here; None: as text (the extra is missing, or was not prepared).

    Loaded on first use when `launch` did not prepare it (the tests, an embedding): only off a
    terminal, where textual-image asks nothing.
    """
    if _loaded == "unloaded" and not _on_a_terminal():
        prepare()
    return _loaded if isinstance(_loaded, Graphics) else None


def missing() -> bool:
    """Whether the extra is known to be missing (so the hint is true)."""
    graphics()
    return _loaded == "missing"


def _on_a_terminal() -> bool:
    out = sys.__stdout__
    return out is not None and out.isatty()


class ImageShelf(Widget):
    """Under a call's line: each image's text line, then the images, side by side."""

    DEFAULT_CSS = """
    ImageShelf { height: auto; }
    ImageShelf > .image-row { height: auto; }
    ImageShelf .image-thumb { margin-right: 1; }
    """

    class Opened(Message):
        """The full-size view of a call's images was asked for."""

        def __init__(self, shelf: ImageShelf) -> None:
            super().__init__()
            self.shelf = shelf

    def __init__(self, lines: list[str], stored: Stored | None, *, classes: str = "") -> None:
        super().__init__(classes=classes)
        self.lines = lines
        """A line per image: name, bytes, dimensions (escaped: the model chose the name)."""
        self.stored = stored
        """Where the images are in the store (None: only the lines are shown)."""
        self.drawn = 0
        """How many images are drawn (the others stay text)."""

    def compose(self) -> ComposeResult:
        """The lines, and a row the images join once read."""
        yield Static("\n".join(self.lines), classes="image-lines", markup=False)
        yield Horizontal(classes="image-row")

    def on_mount(self) -> None:
        """Read and draw the images (in a worker), or say once which extra would."""
        if self.stored is None:
            return
        drawing = graphics()
        if drawing is not None:
            self.run_worker(self._draw(drawing, self.stored), exit_on_error=False)
        elif missing() and self.stored.album.hint_once():
            self.query_one(".image-lines", Static).update("\n".join([*self.lines, HINT]))

    def open(self) -> None:
        """Ask the screen for the full-size view."""
        self.post_message(self.Opened(self))

    async def _draw(self, drawing: Graphics, stored: Stored) -> None:
        try:
            images = await stored.images()
        except (StoreError, sqlite3.Error, OSError):
            return  # the lines stay: a picture the store cannot give is not worth an error
        if not images:
            return
        across = self.content_size.width or 80
        each = max(4, (across - 2 * len(images)) // len(images))
        shown: list[Widget] = []
        for image in images:
            cols, rows = cells(
                image.width, image.height, cols=each, rows=THUMB_ROWS, aspect=drawing.aspect
            )
            if not cols:
                continue
            try:
                picture = await asyncio.to_thread(scaled, image, drawing.box(cols, rows))
            except PictureError:
                continue  # its line stays
            shown.append(drawing.draw(picture, cols, rows, "image-thumb"))
        del images  # the bytes go now; only the small copies stay
        if shown and self.is_attached:
            await self.query_one(".image-row", Horizontal).mount_all(shown)
            self.drawn = len(shown)
            stored.album.drew(self, self.drawn, stored.place)

    def forget(self) -> None:
        """Let the drawn images go (newer took their place); the lines stay, `i` still opens."""
        self.drawn = 0
        if self.is_attached:
            self.query_one(".image-row", Horizontal).remove_children()

    def on_unmount(self) -> None:
        """Pruned from the transcript: its images no longer count."""
        if self.stored is not None and self.drawn:
            self.stored.album.gone(self)

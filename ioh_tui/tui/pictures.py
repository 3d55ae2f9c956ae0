"""The images calls attached, read back from the store and scaled down for the app to draw.

Textual-free. Events carry no image bytes (interface.md §3): a call's images are kept with its
step's tool message (`messages.images`), which is written when the step commits (the engine
emits `StepFinished` after the commit). So the app waits for that commit, reads the one call's
images (`Store.tool_images`), and scales each down once, off the event loop; only the small copy
is kept (the full-size view reads the image again, at its own size, when it opens).
"""

from __future__ import annotations

import asyncio
import bisect
import io
import itertools
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from ioh_tui.core.transcript import Image

if TYPE_CHECKING:
    from PIL.Image import Image as PilImage


KEEP_DRAWN = 60
"""Images kept drawn in a run view at once. Past it the oldest calls' images go back to their
text lines (the full-size view still reads them from the store): each drawn image keeps its
scaled copy, and in a Sixel or Kitty terminal also the encoded form the terminal is sent, up to
a megabyte each at a wide pane's size."""


class PictureError(Exception):
    """An image that cannot be decoded (its text line is shown instead)."""


class Drawn(Protocol):
    """What holds drawn images (a call's shelf), and can let them go."""

    def forget(self) -> None:
        """Drop the drawn images, keeping their text lines."""


class Album:
    """A run view's way to its calls' images: the store, and which steps are committed."""

    def __init__(self, store: Path) -> None:
        self.store = store
        """The store the engine writes."""
        self._committed: set[tuple[int, int]] = set()
        """(run, step) pairs committed so far (a call's images can be read from then on)."""
        self._waiting: dict[tuple[int, int], asyncio.Event] = {}
        self._closed = False
        self._hinted = False
        self._drawn: list[tuple[int, Drawn, int]] = []
        """What holds drawn images, by its call's place (oldest first), with how many it holds."""
        self._count = 0
        self._places = itertools.count()

    def drew(self, holder: Drawn, count: int, place: int) -> None:
        """`holder` (the call at `place`) drew `count` images; past `KEEP_DRAWN` the oldest go.

        Oldest by the calls' order, not by which finished decoding first.
        """
        bisect.insort(self._drawn, (place, holder, count), key=lambda held: held[0])
        self._count += count
        while self._count > KEEP_DRAWN and len(self._drawn) > 1:
            _, oldest, held = self._drawn.pop(0)
            self._count -= held
            oldest.forget()

    def gone(self, holder: Drawn) -> None:
        """`holder` left the screen (pruned from the transcript): no longer counted."""
        self._drawn = [held for held in self._drawn if held[1] is not holder]
        self._count = sum(n for _, _, n in self._drawn)

    def at(self, run_id: int, step: int, call_id: str) -> Stored:
        """Where a call's images will be: its run (an agent's own), step and call id."""
        return Stored(self, run_id, step, call_id, next(self._places))

    def commit(self, run_id: int, step: int) -> None:
        """The run's step is committed: its calls' images can be read."""
        self._committed.add((run_id, step))
        if (event := self._waiting.pop((run_id, step), None)) is not None:
            event.set()

    def close(self) -> None:
        """The run ended: whatever was to be committed is, so nobody waits any more.

        A step answered after a pause is added to (not committed as) a step, and a cancelled
        step is never committed: their readers read once more now, and find what there is.
        """
        self._closed = True
        for event in self._waiting.values():
            event.set()
        self._waiting.clear()

    def hint_once(self) -> bool:
        """True the first time only: the install hint is said once per run view."""
        first, self._hinted = not self._hinted, True
        return first

    async def images(self, stored: Stored) -> tuple[Image, ...]:
        """A call's images, once its step is committed (none if the store has none for it)."""
        key = (stored.run_id, stored.step)
        if not self._closed and key not in self._committed:
            await self._waiting.setdefault(key, asyncio.Event()).wait()
        # Imported here: `launch` loads this module (for `image_view.prepare`) before the app's
        # first frame, which does not wait for the store (issue 23).
        from ioh_tui.store import Store

        async with Store.open(self.store, create=False) as store:
            return await store.tool_images(stored.run_id, stored.step, stored.call_id)


@dataclass(frozen=True, slots=True)
class Stored:
    """Where one call's images are in the store (`Album.at`)."""

    album: Album
    run_id: int
    step: int
    call_id: str
    place: int
    """The call's place among the view's calls with images (`Album.drew` keeps the newest)."""

    async def images(self) -> tuple[Image, ...]:
        """The call's images, once its step is committed."""
        return await self.album.images(self)


def cells(width: int, height: int, *, cols: int, rows: int, aspect: float) -> tuple[int, int]:
    """The (columns, rows) an image of `width` x `height` pixels fills within `cols` x `rows`.

    Its shape is kept: a cell is `aspect` times as tall as it is wide.
    """
    if width <= 0 or height <= 0:
        return 0, 0
    across = max(1, round(rows * aspect * width / height))
    if across <= cols:
        return across, rows
    return max(1, cols), max(1, round(cols * height / (width * aspect)))


def scaled(image: Image, box: tuple[int, int]) -> PilImage:
    """The image decoded and shrunk to fit `box` (pixels), in RGB. Slow: not on the event loop.

    Raises:
        PictureError: Pillow is missing or cannot decode the bytes.
    """
    try:
        from PIL import Image as Pil
    except ImportError:
        raise PictureError("Pillow is not installed") from None
    try:
        with Pil.open(io.BytesIO(image.data)) as opened:
            # A JPEG is decoded straight at a fraction of its size where that still covers `box`.
            opened.draft("RGB", box)
            opened.thumbnail(box)
            return opened.convert("RGB")
    except Exception as exc:  # Pillow raises many kinds for bad bytes; each is one line here
        raise PictureError(f"{image.name} cannot be decoded: {exc}") from None

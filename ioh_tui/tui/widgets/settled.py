"""A transcript block's `virtual_size` that does not ask for a second layout pass.

Textual's `Widget.virtual_size` is a reactive that asks for a layout of the screen whenever it
changes, and each layout pass sets it on every widget it sizes. So a block mounted into the
transcript cost two passes over the whole screen: the one that placed it, and one more because
placing it set its virtual size (290 of the second kind in one run of
benchmarks/bench_tui_tree.py). Only a widget that scrolls, or whose parent sizes itself by it,
needs that second pass; a transcript block is neither: its height is measured by the first pass,
and its virtual size is read by nothing but scrolling. Blocks declare
`virtual_size = settled_size()`, which repaints as before and asks for no layout.
"""

from __future__ import annotations

from textual.geometry import Size
from textual.reactive import Reactive


def settled_size() -> Reactive[Size]:
    """A `virtual_size` reactive for a block that does not scroll (a new one for each class)."""
    return Reactive(Size(0, 0), layout=False)

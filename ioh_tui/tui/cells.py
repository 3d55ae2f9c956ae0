"""Table cells from stored text: never read as markup, control characters shown escaped.

A `DataTable` reads a `str` cell as Rich markup, so a goal or a target holding `[...]` would be
restyled (or fail to parse); stored text comes from models and commands, so it goes in as `Text`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from rich.text import Text
from textual.widgets import DataTable

from ioh_tui.tui.describe import visible


def cell(text: str) -> Text:
    """One cell showing `text` exactly (control characters escaped, so none reach the terminal)."""
    shown, _ = visible(text)
    return Text(shown, no_wrap=True, end="")


def fill(
    table: DataTable[Text], rows: Iterable[Sequence[str]], *, empty: str, keys: Iterable[str] = ()
) -> int:
    """Replace a table's rows; when there are none, one row saying so in the second column.

    Args:
        table: The table (its columns already added).
        rows: The rows, as plain text.
        empty: What the table says when there are no rows.
        keys: Row keys, in the order of `rows` (missing ones: none).

    Returns:
        How many rows were added (0 when the table says `empty`).
    """
    table.clear()
    names = iter(keys)
    count = 0
    for row in rows:
        table.add_row(*(cell(value) for value in row), key=next(names, None))
        count += 1
    if not count:
        width = len(table.columns)
        blank = [cell("")] * width
        blank[min(1, width - 1)] = cell(empty)
        table.add_row(*blank)
    return count

"""Pygments-based highlighting of unified diffs, in one column or split before/after.

Nothing is cut: long lines fold, and the split view keeps rows aligned even when they wrap.
Large diffs are highlighted off the event loop by the caller (see `DiffView`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import zip_longest
from typing import Literal

from pygments import lex
from pygments.lexers import DiffLexer
from pygments.token import Generic, _TokenType
from rich.table import Table
from rich.text import Text

RowKind = Literal["context", "change", "header", "hunk", "note"]

_STYLES: list[tuple[_TokenType, str]] = [
    (Generic.Inserted, "green"),
    (Generic.Deleted, "red"),
    (Generic.Subheading, "cyan"),
    (Generic.Heading, "bold"),
    (Generic.Strong, "bold"),
]
"""Named ANSI colours (not hex) so themes and NO_COLOR treat them like the rest of the app."""

_HUNK = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")


def _style(token: _TokenType) -> str:
    for kind, style in _STYLES:
        # Token types are tuples of names; a subtype starts with its parent's names.
        if token[: len(kind)] == kind:
            return style
    return ""


def unified(diff: str) -> Text:
    """The diff as one column, coloured by pygments' diff lexer."""
    text = Text(overflow="fold", no_wrap=False)
    for token, value in lex(diff, DiffLexer()):
        text.append(value, style=_style(token))
    text.rstrip()
    return text


def plain(diff: str) -> Text:
    """The diff without highlighting (shown while a large diff is highlighted in a thread)."""
    return Text(diff.rstrip("\n"), overflow="fold")


@dataclass(frozen=True, slots=True)
class Row:
    """One aligned row of the split view."""

    kind: RowKind
    left_no: int | None = None
    left: str | None = None
    right_no: int | None = None
    right: str | None = None


def rows(diff: str) -> list[Row]:
    """Pair a unified diff's lines into before/after rows (removals beside their additions)."""
    out: list[Row] = []
    removed: list[tuple[int, str]] = []
    added: list[tuple[int, str]] = []
    old = new = 0

    def flush() -> None:
        for a, b in zip_longest(removed, added):
            out.append(
                Row(
                    "change",
                    a[0] if a else None,
                    a[1] if a else None,
                    b[0] if b else None,
                    b[1] if b else None,
                )
            )
        removed.clear()
        added.clear()

    for line in diff.splitlines():
        if line.startswith(("--- ", "+++ ")) and not removed and not added and old == new == 0:
            out.append(Row("header", left=line))
            continue
        match = _HUNK.match(line)
        if match:
            flush()
            old, new = int(match.group(1)), int(match.group(2))
            out.append(Row("hunk", left=line))
        elif line.startswith("-"):
            removed.append((old, line[1:]))
            old += 1
        elif line.startswith("+"):
            added.append((new, line[1:]))
            new += 1
        elif line.startswith("\\"):
            flush()
            out.append(Row("note", left=line))
        else:
            flush()
            body = line[1:] if line.startswith(" ") else line
            out.append(Row("context", old, body, new, body))
            old += 1
            new += 1
    flush()
    return out


def split(diff: str) -> Table:
    """The diff as two aligned columns, before and after, with line numbers."""
    table = Table(box=None, expand=True, show_header=True, padding=(0, 1), show_edge=False)
    table.add_column("", justify="right", no_wrap=True, style="dim")
    table.add_column("before", ratio=1, overflow="fold")
    table.add_column("", justify="right", no_wrap=True, style="dim")
    table.add_column("after", ratio=1, overflow="fold")
    for row in rows(diff):
        if row.kind in ("header", "hunk", "note"):
            style = "cyan" if row.kind == "hunk" else "bold" if row.kind == "header" else "dim"
            table.add_row("", Text(row.left or "", style=style), "", "")
            continue
        left_style = "red" if row.kind == "change" else ""
        right_style = "green" if row.kind == "change" else ""
        table.add_row(
            "" if row.left_no is None else str(row.left_no),
            Text(row.left if row.left is not None else "", style=left_style),
            "" if row.right_no is None else str(row.right_no),
            Text(row.right if row.right is not None else "", style=right_style),
        )
    return table


def numbered(content: str) -> Text:
    """Whole new content with line numbers (a write with no diff to show)."""
    lines = content.splitlines() or [""]
    width = len(str(len(lines)))
    text = Text(overflow="fold")
    for index, line in enumerate(lines, start=1):
        text.append(f"{index:>{width}} ", style="dim")
        text.append(f"{line}\n", style="green")
    text.rstrip()
    return text

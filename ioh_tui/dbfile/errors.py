"""What is wrong with a store file, said in one line that names the file (exit 2 on the CLI)."""

from __future__ import annotations

import sqlite3

from ioh_tui.core.errors import ResumeError

_CORRUPT = (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB)
"""Primary result codes that mean the file itself is damaged or is not a database."""


class StoreError(ResumeError):
    """The store file cannot be used: not a store, damaged, from a newer version, unreachable.

    A `ResumeError` (a newer store format always was one), so every caller that reports a run
    that cannot be resumed reports this too; the command line exits 2.
    """


def damaged(exc: sqlite3.Error) -> bool:
    """Whether SQLite says the file is damaged (as opposed to busy, locked or read-only)."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None and code & 0xFF in _CORRUPT:
        return True
    text = str(exc)
    return text.startswith(("no such table", "no such column"))

"""Long texts stored once: kept in `texts` under their digest, rows hold the id (schema 6).

A tool's output reached the trace three times: the transcript message the model reads, the tool
call's record and the `tool_call_finished` event. Each now holds a reference to one `texts` row,
and the same text written again (the same file read twice, in any run) is the same row. Shorter
texts stay inline, where a reference would cost more than it saves. These run on the store's
thread, inside the caller's transaction (`Db._atomically`).
"""

from __future__ import annotations

import hashlib
import sqlite3

SHARED_FROM = 256
"""Characters from which a text is stored in `texts` and referenced."""


def keep(conn: sqlite3.Connection, text: str) -> int | None:
    """The id of `text` in `texts` (added if new), or None for a text kept inline."""
    if len(text) < SHARED_FROM:
        return None
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()
    row = conn.execute("SELECT id FROM texts WHERE digest = ?", (digest,)).fetchone()
    if row is not None:
        return int(row[0])
    rowid = conn.execute("INSERT INTO texts (digest, text) VALUES (?, ?)", (digest, text)).lastrowid
    assert rowid is not None
    return rowid

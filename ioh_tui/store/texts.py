"""Long texts stored once: kept in `texts` under their digest, rows hold the id (schemas 6, 7).

A tool's output reached the trace three times: the transcript message the model reads, the tool
call's record and the `tool_call_finished` event. Each now holds a reference to one `texts` row,
and the same text written again (the same file read twice, in any run) is the same row. Shorter
texts stay inline, where a reference would cost more than it saves. These run on the store's
thread, inside the caller's transaction (`Db._atomically`).

Since schema 7 a row's `text` is the text's UTF-8 deflated (a BLOB) when that is shorter: a
1 KB source file takes about half. A row written before (TEXT) reads as it is; the digest is
of the text itself either way, so the same text is found whichever way it was kept.
"""

from __future__ import annotations

import hashlib
import sqlite3
import zlib

from ioh_tui.store.errors import StoreError

SHARED_FROM = 256
"""Characters from which a text is stored in `texts` and referenced."""

_LEVEL = 6
_RAW = -15
"""Raw deflate, no zlib header or checksum (6 bytes a row): SQLite keeps the bytes."""


def keep(conn: sqlite3.Connection, text: str) -> int | None:
    """The id of `text` in `texts` (added if new), or None for a text kept inline."""
    if len(text) < SHARED_FROM:
        return None
    data = text.encode("utf-8", "surrogatepass")
    digest = hashlib.sha256(data).digest()
    row = conn.execute("SELECT id FROM texts WHERE digest = ?", (digest,)).fetchone()
    if row is not None:
        return int(row[0])
    packed = _deflate(data)
    held: str | bytes = packed if len(packed) < len(data) else text
    rowid = conn.execute("INSERT INTO texts (digest, text) VALUES (?, ?)", (digest, held)).lastrowid
    assert rowid is not None
    return rowid


def unpacked(held: str | bytes, path: str, what: str) -> str:
    """The text a `texts.text` value holds (deflated since schema 7, or the text itself).

    Args:
        held: the column's value.
        path: the store file, for the message.
        what: the row, for the message.

    Raises:
        StoreError: the bytes are not a deflated UTF-8 text (the file is damaged).
    """
    if isinstance(held, str):
        return held
    try:
        return zlib.decompress(held, _RAW).decode("utf-8", "surrogatepass")
    except (zlib.error, UnicodeDecodeError) as exc:
        raise StoreError(f"store {path} is damaged: {what} is not a kept text ({exc})") from None


def _deflate(data: bytes) -> bytes:
    # A window no larger than the text: zlib's set-up for its 32 KiB default costs more than
    # deflating a 1 KB text (about 90 us against 40 us here); any raw window inflates at -15.
    window = max(9, min(15, len(data).bit_length()))
    return zlib.compress(data, _LEVEL, -window)

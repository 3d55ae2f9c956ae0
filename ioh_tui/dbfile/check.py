"""Checks made before a store file is used, so a bad file is one line and is never written to.

A file that is not an ioh-tui store (text, garbage, another program's database), a truncated or
damaged one, one from a newer version, a directory or a kernel file: each is refused before the
connection writes anything (the journal mode, a migration), so nothing already recorded is lost.
"""

from __future__ import annotations

import os
import re
import sqlite3
import stat
from contextlib import closing
from pathlib import Path

from ioh_tui.dbfile.errors import StoreError, damaged
from ioh_tui.dbfile.schema import MIGRATIONS, SCHEMA_VERSION

SQLITE_MAGIC = b"SQLite format 3\x00"
_HEADER = 100
"""Bytes of an SQLite database header."""
_KERNEL_FS = (Path("/proc"), Path("/sys"), Path("/dev"))
_TABLE = re.compile(r"CREATE TABLE IF NOT EXISTS (\w+)")
_TABLES = "SELECT name FROM sqlite_master WHERE type = 'table'"


def check_store(path: Path, *, create: bool) -> None:
    """Refuse a store file this build cannot use, reading only (no event loop needed).

    The file's kind and header first, then, for an SQLite database, its format version, its
    tables and the first page of each.

    Args:
        path: the store file.
        create: whether a missing or empty file may become a new store (commands that record);
            read-only commands pass False.

    Raises:
        StoreError: one line naming the file and what is wrong.
    """
    _check_file(path, create=create)
    if not path.exists() or path.stat().st_size == 0:
        return
    try:
        with closing(sqlite3.connect(path, isolation_level=None)) as db:
            db.execute("PRAGMA busy_timeout = 5000")
            (version,) = db.execute("PRAGMA user_version").fetchone()
            tables = {name for (name,) in db.execute(_TABLES)}
            check_schema(str(path), version, tables)
            for table in sorted(expected_tables(version)):
                # The table's own first page (an index would answer `SELECT 1` without it).
                # Damage deeper in a table is found when it is read: a full check would cost
                # about 0.4 s per 100 MB at every open.
                db.execute(f"SELECT 1 FROM {table} NOT INDEXED LIMIT 1").fetchall()
    except sqlite3.Error as exc:
        raise StoreError(unusable(str(path), exc)) from None


def unusable(path: str, exc: sqlite3.Error) -> str:
    """The line for an SQLite error met while opening or checking the store at `path`."""
    if damaged(exc):
        return f"store {path} is damaged: {exc}"
    return f"store {path} cannot be used: {exc}"


def _check_file(path: Path, *, create: bool) -> None:
    """The checks made before SQLite opens the file (its place, its kind, its header)."""
    where = f"store {path}"
    resolved = path.resolve()
    for top in _KERNEL_FS:
        if resolved == top or top in resolved.parents:
            raise StoreError(
                f"{where} is under {top}, a kernel file system: it cannot hold a store"
            )
    try:
        info = os.stat(resolved)
    except FileNotFoundError:
        if not create:
            raise StoreError(f"no store at {path}") from None
        try:
            resolved.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"{where}: cannot create its directory: {_reason(exc)}") from None
        return
    except OSError as exc:
        raise StoreError(f"{where} cannot be read: {_reason(exc)}") from None
    if stat.S_ISDIR(info.st_mode):
        raise StoreError(f"{where} is a directory, not a store file")
    if not stat.S_ISREG(info.st_mode):
        raise StoreError(f"{where} is not a regular file")
    try:
        with resolved.open("rb") as file:
            head = file.read(_HEADER)
    except OSError as exc:
        raise StoreError(f"{where} cannot be read: {_reason(exc)}") from None
    _check_header(where, head, info.st_size, create=create, wal=_wal_holds_data(resolved))


def _check_header(where: str, head: bytes, size: int, *, create: bool, wal: bool) -> None:
    if not head:
        # An empty file is what SQLite makes a new database from; a reader must not do that.
        if create or wal:
            return
        raise StoreError(f"{where} is empty (0 bytes): not an ioh-tui store")
    if not head.startswith(SQLITE_MAGIC):
        raise StoreError(f"{where} is not an ioh-tui store: it is not an SQLite database")
    if len(head) < _HEADER:
        raise StoreError(f"{where} is truncated: {size} bytes, less than a database header")
    page_size = int.from_bytes(head[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    pages = int.from_bytes(head[28:32], "big")
    # The page count is meaningful only when written by the same change as the header
    # (SQLite's own rule); a non-empty WAL may hold pages the main file does not have yet.
    counted = head[24:28] == head[92:96]
    if counted and not wal and size < pages * page_size:
        raise StoreError(
            f"{where} is truncated: {size:,} of its {pages * page_size:,} bytes are there"
        )


def _wal_holds_data(path: Path) -> bool:
    try:
        return path.with_name(path.name + "-wal").stat().st_size > 0
    except OSError:
        return False


def check_schema(path: str, version: int, tables: set[str]) -> None:
    """Refuse a database that is not an ioh-tui store, or is damaged or newer than this build.

    Args:
        path: the store file, for the message.
        version: its `PRAGMA user_version`.
        tables: the names of its tables.

    Raises:
        StoreError: one line naming the file and what is wrong.
    """
    where = f"store {path}"
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"{where}: format {version} is newer than this ioh-tui understands ({SCHEMA_VERSION})"
        )
    if version < 0:
        raise StoreError(f"{where} is not an ioh-tui store (format {version})")
    own = tables - {"sqlite_sequence"}
    if version == 0 and own:
        # Every store ever written has a version: this is another program's database.
        named = ", ".join(sorted(own)[:3]) + (", ..." if len(own) > 3 else "")
        raise StoreError(f"{where} is an SQLite database but not an ioh-tui store ({named})")
    missing = sorted(expected_tables(version) - tables)
    if missing:
        tables_are = "tables are" if len(missing) > 1 else "table is"
        raise StoreError(f"{where} is damaged: its {', '.join(missing)} {tables_are} missing")


def expected_tables(version: int) -> set[str]:
    """The tables a store at `version` has (what its migrations created)."""
    return {name for script in MIGRATIONS[:version] for name in _TABLE.findall(script)}


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc)

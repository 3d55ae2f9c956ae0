"""The store's mechanism: one aiosqlite connection, one lock, and the few helpers every table uses.

One connection serves every coroutine (a whole tree of agents), so a transaction must not
interleave with another coroutine's statements, which would join it: writes take the lock.
Timestamps come from SQLite's clock (`NOW`), so budgets measured across processes (and crashes)
agree.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager
from typing import Any, TypeVar, cast

import aiosqlite

from ioh_tui.store.eventrows import KeySets
from ioh_tui.store.group import GroupCommit

T = TypeVar("T")

log = logging.getLogger(__name__)

NOW = "strftime('%Y-%m-%dT%H:%M:%fZ','now')"


class Db:
    """The connection and its helpers, shared by every repository of the `Store`."""

    _db: aiosqlite.Connection
    path: str
    """The store file (`:memory:` for a throwaway store), named in every error about it."""
    _lock: asyncio.Lock
    """Held by every write, and across a whole transaction."""
    _event_keys: KeySets
    """The `event_keys` lists met so far (`eventrows.py`)."""
    _group: GroupCommit
    """The transactions waiting for the store's thread (`group.py`)."""

    async def _on_thread(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """Run `work` with the connection on aiosqlite's thread (the only one that may touch it).

        One round trip: aiosqlite's own `execute` then `fetchone` then the cursor's close are
        three, each a queue put, a thread switch and a loop wake-up (docs/performance.md).
        """
        db = self._db
        # aiosqlite has no public "run this on your thread"; `_execute` is what its own methods
        # use.
        return cast(T, await db._execute(lambda: work(db._conn)))  # type: ignore[no-untyped-call]

    async def _scalar(self, sql: str, params: Iterable[Any] = ()) -> Any:
        args = tuple(params)

        def first(conn: sqlite3.Connection) -> Any:
            cur = conn.execute(sql, args)
            try:
                row = cur.fetchone()
            finally:
                cur.close()
            return None if row is None else row[0]

        return await self._on_thread(first)

    async def _rows(self, sql: str, params: Iterable[Any] = ()) -> list[dict[str, Any]]:
        args = tuple(params)

        def every(conn: sqlite3.Connection) -> list[dict[str, Any]]:
            cur = conn.execute(sql, args)
            try:
                return [dict(r) for r in cur.fetchall()]
            finally:
                cur.close()

        return await self._on_thread(every)

    async def _exec(self, sql: str, params: Iterable[Any] = ()) -> int:
        """One write outside any transaction; returns the rows it changed."""
        args = tuple(params)

        def write(conn: sqlite3.Connection) -> int:
            cur = conn.execute(sql, args)
            try:
                return int(cur.rowcount)
            finally:
                cur.close()

        async with self._lock:
            return await self._on_thread(write)

    async def _insert(self, sql: str, params: Iterable[Any]) -> int:
        args = tuple(params)

        def insert(conn: sqlite3.Connection) -> int:
            cur = conn.execute(sql, args)
            try:
                rowid = cur.lastrowid
            finally:
                cur.close()
            assert rowid is not None
            return rowid

        async with self._lock:
            return await self._on_thread(insert)

    async def _insert_columns(self, table: str, values: dict[str, Any]) -> int:
        """Insert one row given as column -> value; return its id."""
        cols = ", ".join(values)
        marks = ", ".join("?" * len(values))
        return await self._insert(
            f"INSERT INTO {table} ({cols}) VALUES ({marks})", tuple(values.values())
        )

    @asynccontextmanager
    async def _transaction(self) -> AsyncIterator[aiosqlite.Connection]:
        """One `BEGIN IMMEDIATE` ... `COMMIT` under the lock; rolled back on any exception."""
        async with self._lock:
            db = self._db
            await db.execute("BEGIN IMMEDIATE")
            try:
                yield db
                await db.execute("COMMIT")
            except BaseException:
                await db.execute("ROLLBACK")
                raise

    async def _atomically(
        self,
        work: Callable[[sqlite3.Connection], T],
        kept: Callable[[sqlite3.Connection], None] | None = None,
    ) -> T:
        """Run `work` in one `BEGIN IMMEDIATE` ... `COMMIT` on the store's thread, in one hop.

        A transaction of several statements costs one round trip to aiosqlite's thread instead
        of one per statement (each a queue put, a thread switch and a loop wake-up: about 40 us
        apiece on the 2-core machine, docs/performance.md), and transactions that queue behind
        a busy thread share one (`group.py`). Atomicity is SQLite's, as before: a process
        killed inside `work` leaves the transaction uncommitted, so none of it is there.

        `kept` (the event log's rows riding along) runs first in the same transaction and is
        committed whatever becomes of `work`: `work` failing rolls back to after `kept`, and
        `kept` failing is logged and rolled back alone (the log never fails a step).
        """

        def transaction(conn: sqlite3.Connection) -> T:
            conn.execute("BEGIN IMMEDIATE")
            try:
                if kept is not None:
                    _savepoint(conn, kept)
                    conn.execute("SAVEPOINT work")
                try:
                    result = work(conn)
                except BaseException:
                    if kept is None:
                        raise
                    conn.execute("ROLLBACK TO work")
                    conn.execute("COMMIT")
                    raise
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            return result

        return await self._group.run(transaction)

    async def now(self) -> str:
        """The database clock, ISO-8601 UTC with milliseconds."""
        value: str = await self._scalar(f"SELECT {NOW}")
        return value


def _savepoint(conn: sqlite3.Connection, kept: Callable[[sqlite3.Connection], None]) -> None:
    """Run `kept` inside a savepoint; on an error, undo it alone and log it."""
    conn.execute("SAVEPOINT kept")
    try:
        kept(conn)
    except Exception:
        conn.execute("ROLLBACK TO kept")
        log.exception("could not log the events riding on a transaction")
    conn.execute("RELEASE kept")

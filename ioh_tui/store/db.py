"""Store: one aiosqlite connection in WAL mode, migrated on open; all reads and writes of the trace.

Writes are autocommitted one by one, except a step's commit, an answer appended to a step, and a
lease's take-over: each of those is one transaction. Each table family is a repository in its own
module, over the one connection and lock of `base.Db`; `Store` composes them, so callers see one
object:

- `runs.py`: runs and their totals; `trees.py`: sub-agent trees (spawns, a tree's runs);
- `steps.py`: the step commit, the staged model turn, the journal of effects;
- `decisions.py`: the run's policy, refusals and decisions, approvals;
- `trace.py`: the event log, model-call accounting, criterion runs, sandbox facts;
- `summaries.py`: compactions (the model's summary of a run's oldest turns);
- `leases.py`: one driver per run.

Every read returns a typed row (`rows.py`).
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator, Awaitable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import TypeVar

import aiosqlite

from ioh_tui.sandbox import hidden_while_open
from ioh_tui.store.decisions import Decisions
from ioh_tui.store.errors import StoreError, damaged
from ioh_tui.store.eventrows import KeySets
from ioh_tui.store.group import GroupCommit
from ioh_tui.store.leases import Leases
from ioh_tui.store.opening import check_store, unusable
from ioh_tui.store.rows import RunRow
from ioh_tui.store.schema import MIGRATIONS, SCHEMA_VERSION
from ioh_tui.store.seal import ensure_key
from ioh_tui.store.steps import StepCommit, Steps
from ioh_tui.store.summaries import Summaries
from ioh_tui.store.trace import Trace
from ioh_tui.store.trees import Trees

__all__ = ["RunRow", "StepCommit", "Store"]

T = TypeVar("T")


async def _unbroken(awaitable: Awaitable[T]) -> T:
    """Await `awaitable` to its end even if this task is cancelled meanwhile.

    The cancel then reaches the task at its next `await`. aiosqlite's thread posts each result
    to the loop: a connect or a close cut off by a cancel (a screen's reader cancelled as the
    app exits) left the thread to post to a loop that could be closed by then, an exception in
    the thread or a `SystemError` at interpreter exit.
    """
    inner = asyncio.ensure_future(awaitable)
    cut = False
    while not inner.done():
        try:
            await asyncio.wait({inner})
        except asyncio.CancelledError:
            cut = True
    if cut and (this := asyncio.current_task()) is not None:
        this.cancel()
    return inner.result()


class Store(Trees, Steps, Decisions, Trace, Summaries, Leases):
    """The SQLite trace. Use `async with Store.open(path) as store:` or `Store.memory()`."""

    def __init__(self, db: aiosqlite.Connection, path: str) -> None:
        self._db = db
        self.path = path
        self._lock = asyncio.Lock()
        self._event_keys = KeySets()
        self._group = GroupCommit(self._lock, self._on_thread)

    @classmethod
    @asynccontextmanager
    async def open(cls, path: str | Path, *, create: bool = True) -> AsyncIterator[Store]:
        """Open (creating and migrating) the store at `path`.

        Args:
            path: the SQLite file (`:memory:` for a throwaway store).
            create: whether a missing or empty file becomes a new store; commands that only read
                pass False, so a wrong path is reported instead of becoming an empty store.

        Raises:
            StoreError: the file is not a store, is damaged, truncated or newer than this build,
                or cannot be reached; one line naming it. Nothing in it was changed.
        """
        path = str(path)
        if path != ":memory:":
            check_store(Path(path), create=create)
        try:
            db = await _unbroken(aiosqlite.connect(path, isolation_level=None))
        except sqlite3.Error as exc:
            raise StoreError(f"store {path} cannot be opened: {exc}") from None
        try:
            db.row_factory = sqlite3.Row
            store = cls(db, path)
            try:
                await store._prepare()
            except sqlite3.Error as exc:
                raise StoreError(unusable(path, exc)) from None
            if path != ":memory:":
                ensure_key(path)  # before any command starts, so the sandbox can hide it
            with hidden_while_open(path):
                try:
                    yield store
                except sqlite3.Error as exc:
                    if not damaged(exc):
                        raise
                    raise StoreError(f"store {path} is damaged: {exc}") from None
        finally:
            await _unbroken(db.close())

    @classmethod
    def memory(cls) -> AbstractAsyncContextManager[Store]:
        """An in-memory store (for tests and throwaway runs)."""
        return cls.open(":memory:")

    async def _prepare(self) -> None:
        """Set the connection up and migrate (`check_store` has vouched for the file)."""
        await self._db.execute("PRAGMA busy_timeout = 5000")
        version = await self._scalar("PRAGMA user_version")
        if self.path != ":memory:":
            await self._db.execute("PRAGMA journal_mode = WAL")
        await self._db.execute("PRAGMA synchronous = NORMAL")
        for index in range(version, SCHEMA_VERSION):
            await self._db.execute("BEGIN IMMEDIATE")
            # Another process opening the same new store (the app and an `exec`, a web tab) may
            # have migrated it while this one waited for the lock: read the version again.
            if await self._scalar("PRAGMA user_version") > index:
                await self._db.execute("COMMIT")
                continue
            for statement in _statements(MIGRATIONS[index]):
                await self._db.execute(statement)
            await self._db.execute(f"PRAGMA user_version = {index + 1}")
            await self._db.execute("COMMIT")


def _statements(script: str) -> list[str]:
    """Split a DDL script into statements (the DDL has no semicolons inside literals)."""
    return [s.strip() for s in script.split(";") if s.strip()]

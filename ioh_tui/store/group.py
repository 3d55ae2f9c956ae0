"""Group commit: transactions that queue behind a busy store reach its thread in one hop.

A tree's agents share one store, and each step's transactions (its staged turn, its commit)
used to take the store's lock and make a round trip to its thread one by one. A round trip is
a queue put, a thread switch and a loop wake-up; on a loaded machine the hand-over of the GIL
makes it cost more than the SQL. Here the transactions asked for while one is on the thread
wait together and then go in one call, which runs each as its own `BEGIN IMMEDIATE` ...
`COMMIT`, in the order they were asked for. Atomicity is each transaction's own, as before: a
process killed during a group leaves the transactions committed before it whole and the one
it was in absent, so each agent's step is whole or not there.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, cast

T = TypeVar("T")

Transaction = Callable[[sqlite3.Connection], Any]
Outcome = tuple[bool, Any]
"""(True, the result) or (False, the exception)."""


class GroupCommit:
    """The transactions waiting for the store's thread, and the one task that takes them there."""

    def __init__(
        self,
        lock: asyncio.Lock,
        on_thread: Callable[[Transaction], Awaitable[Any]],
    ) -> None:
        self._lock = lock
        self._on_thread = on_thread
        self._waiting: list[tuple[Transaction, asyncio.Future[Any]]] = []
        self._runner: asyncio.Task[None] | None = None

    async def run(self, transaction: Callable[[sqlite3.Connection], T]) -> T:
        """Run `transaction` on the store's thread, with whatever else is waiting; its result.

        A caller cancelled before its group leaves is left out of it, as a caller cancelled
        while waiting for the lock was.
        """
        if self._runner is None and not self._lock.locked():
            # Nothing to group with: straight to the thread (no task, no future of our own).
            async with self._lock:
                return cast(T, await self._on_thread(transaction))
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiting.append((transaction, future))
        if self._runner is None:
            self._runner = asyncio.get_running_loop().create_task(self._take(), name="store-group")
        return cast(T, await future)

    async def _take(self) -> None:
        try:
            while self._waiting:
                async with self._lock:
                    group = [(t, f) for t, f in self._waiting if not f.cancelled()]
                    self._waiting = []
                    if group:
                        await self._send(group)
        finally:
            self._runner = None
            waiting, self._waiting = self._waiting, []
            for _, future in waiting:  # only when this task was itself cancelled
                future.cancel()

    async def _send(self, group: list[tuple[Transaction, asyncio.Future[Any]]]) -> None:
        try:
            outcomes = await self._on_thread(_each([t for t, _ in group]))
        except asyncio.CancelledError:
            for _, future in group:
                future.cancel()
            raise
        except Exception as exc:  # the call itself failed (a closed connection): all hear it
            outcomes = [(False, exc)] * len(group)
        for (_, future), (ok, value) in zip(group, outcomes, strict=True):
            if future.done():  # its caller was cancelled meanwhile
                continue
            if ok:
                future.set_result(value)
            else:
                future.set_exception(value)


def _each(group: list[Transaction]) -> Callable[[sqlite3.Connection], list[Outcome]]:
    def run(conn: sqlite3.Connection) -> list[Outcome]:
        outcomes: list[Outcome] = []
        for transaction in group:
            try:
                outcomes.append((True, transaction(conn)))
            except Exception as exc:
                outcomes.append((False, exc))
        return outcomes

    return run

"""Cancellation: a token the app (or a signal handler) trips; the loop stops at once, cleanly."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable
from typing import TypeVar

from ioh_tui.core.control import RunCancelled

__all__ = ["CancelToken", "RunCancelled"]

T = TypeVar("T")


class CancelToken:
    """Tripped once; interrupts what the loop awaits (a model stream, a command, a decision)."""

    def __init__(self) -> None:
        self._event = asyncio.Event()
        self.reason = ""

    @property
    def cancelled(self) -> bool:
        """Whether `cancel` was called."""
        return self._event.is_set()

    def cancel(self, reason: str = "cancelled by the operator") -> None:
        """Stop the run."""
        if not self._event.is_set():
            self.reason = reason
            self._event.set()

    async def guard(self, awaitable: Awaitable[T]) -> T:
        """Await `awaitable`, unless the token trips first: then cancel it and raise `RunCancelled`.

        Cancelling a command's task kills its whole process tree (the sandbox's guarantee).
        """
        if self.cancelled:
            if asyncio.iscoroutine(awaitable):
                awaitable.close()
            raise RunCancelled(self.reason)
        work = asyncio.ensure_future(awaitable)
        stop = asyncio.ensure_future(self._event.wait())
        try:
            await asyncio.wait({work, stop}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            work.cancel()
            raise
        finally:
            stop.cancel()
        if work.done():
            return work.result()
        work.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await work
        raise RunCancelled(self.reason)

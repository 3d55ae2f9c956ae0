"""Updates sent in order from a queue: engine observers are synchronous, sending is not.

An observer must return at once (`engine/bus.py`), so it only queues; one task per session sends
the queue in order. `flush` waits until everything queued is sent: before a permission request
(its tool call goes first) and before a prompt's answer (no update after the turn ends).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from acp.interfaces import Client

log = logging.getLogger(__name__)


class Outbox:
    """One session's `session/update` notifications, sent in the order they were queued."""

    def __init__(self, client: Client, session_id: str) -> None:
        """Send to `client` in `session_id`."""
        self._client = client
        self._session_id = session_id
        self._queue: asyncio.Queue[Any] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None

    def put(self, update: Any) -> None:
        """Queue one update (an `acp.schema` session update)."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._send(), name="acp-outbox")
        self._queue.put_nowait(update)

    async def _send(self) -> None:
        while True:
            update = await self._queue.get()
            try:
                await self._client.session_update(session_id=self._session_id, update=update)
            except Exception:
                # A client that went away or refused one update must not stop the run.
                log.exception("could not send a session update")
            finally:
                self._queue.task_done()

    async def flush(self) -> None:
        """Wait until every queued update is sent."""
        await self._queue.join()

    async def close(self) -> None:
        """Send what is queued, then stop the sender."""
        task, self._task = self._task, None
        if task is None:
            return
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._queue.join(), timeout=5)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

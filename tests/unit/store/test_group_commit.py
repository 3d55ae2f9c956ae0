"""Transactions that queue behind a busy store go to its thread together, each still whole."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from ioh_tui.core.errors import ConflictError
from ioh_tui.core.transcript import Message
from ioh_tui.store import StepCommit, Store


def _step(run_id: int, step: int, owner: str | None = None) -> StepCommit:
    messages = (Message("assistant", f"step {step}"),)
    return StepCommit(run_id, step, "no tool call", "", 1, 1, None, messages, (), owner, 1)


def _hops(store: Store) -> list[int]:
    """Count the calls made on the store's thread from now on."""
    made = [0]
    execute = store._db._execute

    async def counted(fn: Any, *args: Any, **kwargs: Any) -> Any:
        made[0] += 1
        return await execute(fn, *args, **kwargs)  # type: ignore[no-untyped-call]

    store._db._execute = counted  # type: ignore[method-assign]
    return made


async def test_commits_queued_together_share_a_hop_and_each_stands_alone(
    store: Store, run_id: int
) -> None:
    await store.acquire_lease(run_id, "first", 60)
    made = _hops(store)
    async with store._lock:  # the thread is busy: everything queues behind it
        commits = [
            asyncio.ensure_future(store.commit_step(_step(run_id, n, owner="first")))
            for n in (1, 2, 3, 4)
        ]
        lost = asyncio.ensure_future(store.commit_step(_step(run_id, 5, owner="another")))
        await asyncio.sleep(0)
    await asyncio.gather(*commits)
    with pytest.raises(ConflictError):
        await lost
    assert made[0] == 1
    assert [s.step for s in await store.steps(run_id)] == [1, 2, 3, 4]


async def test_a_caller_cancelled_while_it_waits_is_left_out(store: Store, run_id: int) -> None:
    async with store._lock:
        kept = asyncio.ensure_future(store.commit_step(_step(run_id, 1)))
        dropped = asyncio.ensure_future(store.commit_step(_step(run_id, 2)))
        await asyncio.sleep(0)
        dropped.cancel()
    await kept
    with pytest.raises(asyncio.CancelledError):
        await dropped
    assert [s.step for s in await store.steps(run_id)] == [1]

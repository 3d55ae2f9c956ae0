"""Leases: a live owner keeps its run; a dead, zombie or pid-reusing one does not."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from ioh_tui.core.errors import ConflictError
from ioh_tui.store import Store


async def test_a_live_owner_keeps_its_run(store: Store, run_id: int) -> None:
    await store.acquire_lease(run_id, f"{os.getpid()}-{time.time_ns()}-1", 60)
    assert await store.driven_runs() == {run_id}
    with pytest.raises(ConflictError):
        await store.acquire_lease(run_id, f"{os.getpid()}-{time.time_ns()}-2", 60)


async def test_a_zombie_owner_is_dead(store: Store, run_id: int) -> None:
    minted = time.time_ns()
    child = _zombie()
    try:
        await store.acquire_lease(run_id, f"{child.pid}-{minted}-1", 60)
        assert await store.driven_runs() == set()
        assert await store.acquire_lease(run_id, f"{os.getpid()}-{time.time_ns()}-2", 60) == 2
    finally:
        child.wait()


async def test_an_owner_whose_pid_was_reused_is_dead(store: Store, run_id: int) -> None:
    # This process started long after an owner id minted at the epoch: not that owner.
    await store.acquire_lease(run_id, f"{os.getpid()}-0-1", 60)
    assert await store.driven_runs() == set()


def _zombie() -> subprocess.Popen[bytes]:
    """A child that has exited but is not reaped: its pid still answers kill(pid, 0)."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    while _state(child.pid) != "Z":
        time.sleep(0.01)
    return child


def _state(pid: int) -> str:
    with open(f"/proc/{pid}/stat") as stat:
        return stat.read().rsplit(")", 1)[1].split()[0]

"""Leases: one driver per run. A lease names its owner (`<pid>-...`) and expires unless renewed.

A step's commit renews the lease inside its own transaction (`steps.py`), so a driver that lost
the lease writes nothing.
"""

from __future__ import annotations

import psutil

from ioh_tui.core.errors import ConflictError
from ioh_tui.store.base import NOW, Db


class Leases(Db):
    """The `run_leases` table."""

    async def acquire_lease(self, run_id: int, owner: str, ttl_s: float) -> int:
        """Take the run's lease (or take over a dead or expired owner's); return the generation."""
        async with self._transaction() as db:
            rows = await self._rows(
                "SELECT owner, generation, (julianday('now') - julianday(renewed_at)) * 86400.0"
                " AS age, ttl_s FROM run_leases WHERE run_id = ?",
                (run_id,),
            )
            if not rows:
                generation = 1
                await db.execute(
                    "INSERT INTO run_leases (run_id, owner, generation, ttl_s) VALUES (?,?,?,?)",
                    (run_id, owner, generation, ttl_s),
                )
            else:
                row = rows[0]
                live = (
                    row["owner"] != owner
                    and row["age"] < row["ttl_s"]
                    and _owner_alive(row["owner"])
                )
                if live:
                    raise ConflictError(run_id, row["owner"])
                generation = row["generation"] + (row["owner"] != owner)
                await db.execute(
                    f"UPDATE run_leases SET owner = ?, generation = ?, acquired_at = {NOW},"
                    f" renewed_at = {NOW}, ttl_s = ? WHERE run_id = ?",
                    (owner, generation, ttl_s, run_id),
                )
        return int(generation)

    async def driven_runs(self) -> set[int]:
        """Runs a live driver holds now: a lease not expired whose owning process is alive.

        A run left `running` without one was driven by a process that died (it can be resumed).
        """
        rows = await self._rows(
            "SELECT run_id, owner, (julianday('now') - julianday(renewed_at)) * 86400.0 AS age,"
            " ttl_s FROM run_leases"
        )
        return {
            int(row["run_id"])
            for row in rows
            if row["age"] < row["ttl_s"] and _owner_alive(row["owner"])
        }

    async def release_lease(self, run_id: int, owner: str) -> None:
        """Give the lease back (only if we still hold it)."""
        await self._exec("DELETE FROM run_leases WHERE run_id = ? AND owner = ?", (run_id, owner))


def _owner_alive(owner: str) -> bool:
    """Whether the process an owner id (`<pid>-<ns>-...`) names is alive; unknown counts as alive.

    A zombie is dead (it drives nothing; its parent has not reaped it yet), and so is a process
    that started after the owner id was minted: its pid was reused.
    """
    parts = owner.split("-")
    try:
        pid = int(parts[0])
    except ValueError:
        return True
    try:
        proc = psutil.Process(pid)
        if proc.status() == psutil.STATUS_ZOMBIE:
            return False
        started = proc.create_time()
    except psutil.NoSuchProcess:
        return False
    except psutil.Error:
        return True
    try:
        minted = int(parts[1]) / 1e9
    except (IndexError, ValueError):
        return True
    # create_time is rounded to the clock tick: a second of slack keeps the true owner alive.
    return started <= minted + 1.0

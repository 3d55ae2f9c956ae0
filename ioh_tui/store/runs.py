"""Runs: a run's row (its goal, contract, driver and how it ended) and the totals read with it."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ioh_tui.core.errors import ResumeError
from ioh_tui.store.base import NOW, Db
from ioh_tui.store.errors import decoded
from ioh_tui.store.rows import RunRow

INSERT_SPAWN = (
    "INSERT INTO spawns (parent_run_id, step, seq, child_run_id, goal, detached)"
    " VALUES (?,?,?,?,?,?)"
)
"""Plain INSERT: a call that already made a child must fail the transaction, not make another."""


@dataclass(frozen=True, slots=True)
class SpawnCall:
    """The parent's call that made a sub-agent, and the policy the sub-agent runs under."""

    step: int
    seq: int
    """The call's position in the parent's step."""
    detached: bool
    policy: str
    """The sub-agent's policy (JSON)."""

    def row(self, child_run_id: int, goal: str) -> tuple[int, int, int, str, int]:
        """The spawn row's values after the parent's id."""
        return (self.step, self.seq, child_run_id, goal, int(self.detached))


class Runs(Db):
    """The `runs` table."""

    async def start_run(
        self,
        *,
        goal: str,
        mode: str,
        root: str,
        subject: str | None,
        contract: dict[str, Any],
        provider: str,
        model: str | None,
        sandbox: str,
        parent_run_id: int | None = None,
        root_run_id: int | None = None,
        depth: int = 0,
        agent_label: str = "root",
        spawn: SpawnCall | None = None,
    ) -> int:
        """Create a run row in status `running`, in one transaction; return its id.

        A sub-agent names the parent's call that made it (`spawn`): it is labelled `agent-<id>`
        and its run row, its policy and the spawn row are written together, so a crash leaves
        all three (the resumed parent adopts the child) or none (the resumed parent makes it
        anew), never a child no one adopts.
        """
        async with self._transaction() as db:
            async with db.execute(
                "INSERT INTO runs (goal, mode, root, subject, contract, provider, model, sandbox,"
                " parent_run_id, root_run_id, depth, agent_label)"
                " VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    goal,
                    mode,
                    root,
                    subject,
                    json.dumps(contract, sort_keys=True),
                    provider,
                    model,
                    sandbox,
                    parent_run_id,
                    root_run_id,
                    depth,
                    agent_label,
                ),
            ) as cur:
                run_id = cur.lastrowid
            assert run_id is not None
            if root_run_id is None:
                await db.execute("UPDATE runs SET root_run_id = id WHERE id = ?", (run_id,))
            if spawn is not None:
                assert parent_run_id is not None, "a spawned run has a parent"
                await db.execute(
                    "UPDATE runs SET agent_label = ? WHERE id = ?", (f"agent-{run_id}", run_id)
                )
                await db.execute(
                    "INSERT OR REPLACE INTO run_policies (run_id, policy) VALUES (?, ?)",
                    (run_id, spawn.policy),
                )
                await db.execute(INSERT_SPAWN, (parent_run_id, *spawn.row(run_id, goal)))
        return run_id

    async def set_run_driver(
        self, run_id: int, *, provider: str, model: str | None, sandbox: str
    ) -> None:
        """Record which provider, model and sandbox drive the run now (a resume may change them)."""
        await self._exec(
            "UPDATE runs SET provider = ?, model = ?, sandbox = ?, status = 'running' WHERE id = ?",
            (provider, model, sandbox, run_id),
        )

    async def update_contract(self, run_id: int, contract: dict[str, Any]) -> None:
        """Replace the stored contract (a resume may raise its budgets)."""
        await self._exec(
            "UPDATE runs SET contract = ? WHERE id = ?",
            (json.dumps(contract, sort_keys=True), run_id),
        )

    async def finish_run(self, run_id: int, *, status: str, outcome: str, detail: str = "") -> None:
        """Record how the run ended (`status` is `completed` or `paused`)."""
        await self._exec(
            f"UPDATE runs SET status = ?, outcome = ?, detail = ?, finished_at = {NOW}"
            " WHERE id = ?",
            (status, outcome, detail, run_id),
        )

    async def run(self, run_id: int) -> RunRow:
        """One run with its totals; `ResumeError` when there is none."""
        rows = await self._run_rows("WHERE r.id = ?", (run_id,))
        if not rows:
            raise ResumeError(f"no run with id {run_id}")
        return rows[0]

    async def runs(self, *, limit: int = 200, roots_only: bool = False) -> list[RunRow]:
        """Recent runs, newest first."""
        where = "WHERE r.parent_run_id IS NULL" if roots_only else ""
        return await self._run_rows(f"{where} ORDER BY r.id DESC LIMIT ?", (limit,))

    async def run_costs(self) -> dict[int, float]:
        """Each run's cost in dollars (its steps' sum), for runs whose provider reported one."""
        rows = await self._rows(
            "SELECT run_id, SUM(cost_usd) AS cost FROM steps WHERE cost_usd IS NOT NULL"
            " GROUP BY run_id"
        )
        return {int(row["run_id"]): float(row["cost"]) for row in rows}

    async def run_cost(self, run_id: int) -> float | None:
        """One run's cost in dollars so far (None: its provider reported none)."""
        cost = await self._scalar(
            "SELECT SUM(cost_usd) FROM steps WHERE run_id = ? AND cost_usd IS NOT NULL", (run_id,)
        )
        return None if cost is None else float(cost)

    async def children(self, run_id: int) -> list[RunRow]:
        """Direct sub-agents of a run, oldest first."""
        return await self._run_rows("WHERE r.parent_run_id = ? ORDER BY r.id", (run_id,))

    async def _run_rows(self, tail: str, params: Iterable[Any]) -> list[RunRow]:
        rows = await self._rows(
            "SELECT r.*, (SELECT COUNT(*) FROM steps s WHERE s.run_id = r.id) AS steps,"
            " (SELECT COALESCE(SUM(tokens), 0) FROM steps s WHERE s.run_id = r.id) AS tokens"
            f" FROM runs r {tail}",
            params,
        )
        return [
            RunRow(
                **{
                    **row,
                    "contract": decoded(row["contract"], self.path, f"run {row['id']}'s contract"),
                }
            )
            for row in rows
        ]

    async def elapsed_s(self, run_id: int) -> float:
        """Seconds since the run started, by the database clock (so it survives restarts)."""
        value = await self._scalar(
            "SELECT (julianday('now') - julianday(started_at)) * 86400.0 FROM runs WHERE id = ?",
            (run_id,),
        )
        return float(value or 0.0)

    async def spent_tokens(self, run_id: int) -> int:
        """Tokens of the run's committed steps."""
        return int(
            await self._scalar(
                "SELECT COALESCE(SUM(tokens),0) FROM steps WHERE run_id=?", (run_id,)
            )
        )

    async def last_step(self, run_id: int) -> int:
        """The last committed step (0 when none)."""
        return int(
            await self._scalar("SELECT COALESCE(MAX(step),0) FROM steps WHERE run_id=?", (run_id,))
        )

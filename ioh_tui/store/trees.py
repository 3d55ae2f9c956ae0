"""Sub-agent trees: which call of which parent step made which child, and a tree's totals."""

from __future__ import annotations

from ioh_tui.store.rows import RunRow
from ioh_tui.store.runs import INSERT_SPAWN, Runs


class Trees(Runs):
    """The `spawns` table, and the runs of one tree (a tree is runs sharing a root)."""

    async def adopt_orphan(
        self, parent_run_id: int, step: int, seq: int, goal: str, detached: bool
    ) -> int | None:
        """Give a parent's call the child an older store left without a spawn row; its id or None.

        Before a child's rows were one transaction (`start_run` with `spawn`), a crash between
        its run row and its spawn row left a child that never ran a step and that no call named.
        The oldest such child of this parent with this goal is claimed for the call (in one
        transaction, so two calls never claim the same one) and labelled as a child.
        """
        async with self._transaction() as db:
            async with db.execute(
                "SELECT r.id FROM runs r WHERE r.parent_run_id = ? AND r.goal = ?"
                " AND r.status = 'running'"
                " AND NOT EXISTS (SELECT 1 FROM spawns p WHERE p.child_run_id = r.id)"
                " AND NOT EXISTS (SELECT 1 FROM steps s WHERE s.run_id = r.id)"
                " ORDER BY r.id LIMIT 1",
                (parent_run_id, goal),
            ) as cur:
                row = await cur.fetchone()
            if row is None:
                return None
            child = int(row[0])
            await db.execute(
                "UPDATE runs SET agent_label = ? WHERE id = ?", (f"agent-{child}", child)
            )
            await db.execute(INSERT_SPAWN, (parent_run_id, step, seq, child, goal, int(detached)))
        return child

    async def spawned(self, parent_run_id: int, step: int, seq: int) -> int | None:
        """The child a parent's call made, if it made one."""
        value = await self._scalar(
            "SELECT child_run_id FROM spawns WHERE parent_run_id = ? AND step = ? AND seq = ?",
            (parent_run_id, step, seq),
        )
        return None if value is None else int(value)

    async def tree(self, root_run_id: int) -> list[RunRow]:
        """Every run of a tree (the root and all its sub-agents), in creation order."""
        return await self._run_rows("WHERE r.root_run_id = ? ORDER BY r.id", (root_run_id,))

    async def tree_tokens(self, root_run_id: int) -> int:
        """Tokens of every committed step in a tree."""
        value = await self._scalar(
            "SELECT COALESCE(SUM(s.tokens), 0) FROM steps s JOIN runs r ON r.id = s.run_id"
            " WHERE r.root_run_id = ?",
            (root_run_id,),
        )
        return int(value)

    async def pending_below(self, run_id: int) -> list[int]:
        """Pending requests of the paused agents below `run_id` (its whole subtree), oldest first.

        A sub-agent that deferred a decision paused, and so did every agent waiting on it.
        """
        rows = await self._rows(
            f"{_BELOW} SELECT a.id FROM approvals a JOIN runs r ON r.id = a.run_id"
            " WHERE a.run_id IN (SELECT id FROM below) AND r.status = 'paused'"
            " AND a.status = 'pending' ORDER BY a.id",
            (run_id,),
        )
        return [int(row["id"]) for row in rows]

    async def paused_below(self, run_id: int) -> bool:
        """Whether an agent of `run_id`'s subtree is paused (a decision it deferred waits)."""
        value = await self._scalar(
            f"{_BELOW} SELECT COUNT(*) FROM runs WHERE id IN (SELECT id FROM below)"
            " AND status = 'paused'",
            (run_id,),
        )
        return bool(value)

    async def paused_detached(self, parent_run_id: int) -> list[int]:
        """The parent's detached children that paused, in order, from its committed steps.

        A child spawned in a step the parent never committed is adopted when that step is replayed.
        """
        rows = await self._rows(
            "SELECT p.child_run_id AS id FROM spawns p JOIN runs r ON r.id = p.child_run_id"
            " WHERE p.parent_run_id = ? AND p.detached = 1 AND r.status = 'paused'"
            " AND p.step <= (SELECT COALESCE(MAX(s.step), 0) FROM steps s WHERE s.run_id = ?)"
            " ORDER BY p.child_run_id",
            (parent_run_id, parent_run_id),
        )
        return [int(row["id"]) for row in rows]


_BELOW = (
    "WITH RECURSIVE below(id) AS (SELECT id FROM runs WHERE parent_run_id = ?"
    " UNION ALL SELECT r.id FROM runs r JOIN below b ON r.parent_run_id = b.id)"
)

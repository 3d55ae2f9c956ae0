"""Sub-agent trees: which call of which parent step made which child, and a tree's totals."""

from __future__ import annotations

from ioh_tui.store.rows import RunRow
from ioh_tui.store.runs import Runs


class Trees(Runs):
    """The `spawns` table, and the runs of one tree (a tree is runs sharing a root)."""

    async def add_spawn(
        self, parent_run_id: int, step: int, seq: int, child_run_id: int, goal: str, detached: bool
    ) -> None:
        """Record which call of which parent step made a child (a resume adopts it)."""
        await self._exec(
            "INSERT OR IGNORE INTO spawns (parent_run_id, step, seq, child_run_id, goal, detached)"
            " VALUES (?,?,?,?,?,?)",
            (parent_run_id, step, seq, child_run_id, goal, int(detached)),
        )

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

"""Compactions: a summary stands for a run's oldest turns, so a resume rebuilds the same context.

A summary is written before the context is changed to use it, and `(run, turns)` is unique: a
drive that finds the summary of the turns it is about to fold takes it instead of asking again.
"""

from __future__ import annotations

from ioh_tui.store.base import Db
from ioh_tui.store.rows import SummaryRow


class Summaries(Db):
    """The `summaries` table."""

    async def add_summary(
        self, run_id: int, step: int, turns: int, text: str, tokens_before: int, tokens_after: int
    ) -> None:
        """Keep the summary of the run's first `turns` turns (a second one of them is ignored)."""
        await self._exec(
            "INSERT OR IGNORE INTO summaries (run_id, step, turns, text, tokens_before,"
            " tokens_after) VALUES (?,?,?,?,?,?)",
            (run_id, step, turns, text, tokens_before, tokens_after),
        )

    async def summary(self, run_id: int, turns: int) -> SummaryRow | None:
        """The summary of exactly the first `turns` turns, if one was kept."""
        rows = await self._rows(
            "SELECT * FROM summaries WHERE run_id = ? AND turns = ?", (run_id, turns)
        )
        return SummaryRow(**rows[0]) if rows else None

    async def summaries(self, run_id: int) -> list[SummaryRow]:
        """Every summary of a run, oldest first (the last one is the one in force)."""
        rows = await self._rows("SELECT * FROM summaries WHERE run_id = ? ORDER BY id", (run_id,))
        return [SummaryRow(**row) for row in rows]

"""What a long run keeps in the store that the run view reads back: its notes and its summaries.

Textual-free. Notes are read with the engine's own reader (`engine.ask.notes_in`, the one a resumed
drive pins them with), so the app and the model always see the same notes.
"""

from __future__ import annotations

from pathlib import Path

from ioh_tui.engine.ask import notes_in
from ioh_tui.store import Store
from ioh_tui.store.rows import SummaryRow


async def stored_notes(path: Path, run_id: int, *, through_step: int) -> list[str]:
    """The notes the run's committed steps up to `through_step` kept, oldest first."""
    async with Store.open(path) as store:
        rows = await store.messages(run_id)
    return notes_in([row.message for row in rows if row.step <= through_step])


async def stored_summary(
    path: Path, run_id: int, *, step: int, tokens_before: int
) -> SummaryRow | None:
    """The summary a compaction at `step` stored (the one that began at `tokens_before`).

    One request may need more than one fold; the count tells them apart.
    """
    async with Store.open(path) as store:
        at_step = [s for s in await store.summaries(run_id) if s.step == step]
    exact = [s for s in at_step if s.tokens_before == tokens_before]
    found = exact or at_step
    return found[-1] if found else None

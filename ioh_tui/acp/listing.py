"""`session/list`: the stored conversations an ACP client can load or resume, newest first.

A session is a conversation: a run, and the runs it carries on (`"continues"` in its contract).
Only a conversation's last run is listed (the others are in it); its id is `run-N`, as
`session/load` and `session/resume` take it, and its title is the conversation's first prompt.
"""

from __future__ import annotations

import asyncio
import os

from acp.schema import ListSessionsResponse, SessionInfo

from ioh_tui.core.outcomes import run_state
from ioh_tui.store import Store
from ioh_tui.store.rows import RunRow

PAGE = 50
"""Sessions a page."""
SCANNED = 10_000
"""The newest runs looked at: older conversations are not listed."""
_TITLE = 100


async def listed_sessions(
    store: Store, cwd: str | None = None, cursor: str | None = None, *, page: int = PAGE
) -> ListSessionsResponse:
    """A page of the store's conversations, in `cwd` when given, after `cursor`.

    The cursor is the last listed run's id: a page holds older conversations only, so runs
    recorded while a client pages through never repeat or shift an entry.
    """
    runs = await store.runs(limit=SCANNED, roots_only=True)
    driven = await store.driven_runs()
    by_id = {run.id: run for run in runs}
    carried = {int(earlier) for run in runs for earlier in _continues(run)}
    before = int(cursor) if cursor is not None and cursor.isdigit() else None
    # Roots are stored resolved: compared as text, the cwd as given and resolved.
    where = {cwd, await asyncio.to_thread(os.path.realpath, cwd)} if cwd else None
    heads = [
        run
        for run in runs
        if run.id not in carried
        and (before is None or run.id < before)
        and (where is None or run.root in where)
    ]
    shown = heads[:page]
    more = len(heads) > page
    return ListSessionsResponse(
        sessions=[_info(run, by_id, run_state(run, driven)) for run in shown],
        next_cursor=str(shown[-1].id) if more else None,
    )


def _continues(run: RunRow) -> list[int]:
    earlier = run.contract.get("continues") or []
    return [int(r) for r in earlier if isinstance(r, int | str) and str(r).isdigit()]


def _info(run: RunRow, by_id: dict[int, RunRow], state: str) -> SessionInfo:
    conversation = [*_continues(run), run.id]
    first = by_id.get(conversation[0], run)
    title = first.goal.strip().splitlines()[0] if first.goal.strip() else f"run {run.id}"
    if len(title) > _TITLE:
        title = title[: _TITLE - 1] + "…"
    return SessionInfo(
        session_id=f"run-{run.id}",
        cwd=run.root,
        title=title,
        updated_at=run.finished_at or run.started_at,
        field_meta={
            "ioh-tui": {
                "runId": run.id,
                "runs": conversation,
                "state": state,
            }
        },
    )

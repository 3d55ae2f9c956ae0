"""The trace around the steps: the event log, model-call accounting, criterion runs, sandbox."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ioh_tui.store.base import Db
from ioh_tui.store.errors import decoded
from ioh_tui.store.rows import EventRow, GateAttemptRow, ProviderCallRow, SandboxEventRow


class Trace(Db):
    """The `events`, `provider_calls`, `gate_attempts` and `sandbox_events` tables."""

    async def add_events(
        self, events: Sequence[tuple[int, int | None, str, dict[str, Any]]]
    ) -> None:
        """Append engine events (run id, agent id, kind, JSON form) to the event log, in order."""
        if not events:
            return
        async with self._lock:
            await self._db.executemany(
                "INSERT INTO events (run_id, agent_id, step, kind, json) VALUES (?,?,?,?,?)",
                [(r, a, data.get("step"), kind, json.dumps(data)) for r, a, kind, data in events],
            )

    async def events(self, run_id: int, *, after_id: int = 0) -> list[EventRow]:
        """Logged events of a run (or of a whole tree, by root id), oldest first."""
        rows = await self._rows(
            "SELECT id, kind, json, at FROM events WHERE run_id = ? AND id > ? ORDER BY id",
            (run_id, after_id),
        )
        return [
            EventRow(**{**row, "json": decoded(row["json"], self.path, f"event {row['id']}")})
            for row in rows
        ]

    async def add_provider_call(self, run_id: int, step: int, row: dict[str, Any]) -> None:
        """One accounting row per model-call attempt (`row`: the other columns by name)."""
        await self._insert_columns("provider_calls", {"run_id": run_id, "step": step, **row})

    async def provider_calls(self, run_id: int) -> list[ProviderCallRow]:
        """Accounting rows of a run, in order."""
        rows = await self._rows(
            "SELECT * FROM provider_calls WHERE run_id = ? ORDER BY id", (run_id,)
        )
        return [ProviderCallRow(**row) for row in rows]

    async def add_gate_attempt(
        self, run_id: int, step: int, criterion: str, status: str, detail: str
    ) -> None:
        """Record one evaluation of the success criterion."""
        await self._exec(
            "INSERT INTO gate_attempts (run_id, step, criterion, status, detail)"
            " VALUES (?,?,?,?,?)",
            (run_id, step, criterion, status, detail),
        )

    async def gate_attempts(self, run_id: int) -> list[GateAttemptRow]:
        """Evaluations of the criterion, in order."""
        rows = await self._rows(
            "SELECT * FROM gate_attempts WHERE run_id = ? ORDER BY id", (run_id,)
        )
        return [GateAttemptRow(**row) for row in rows]

    async def add_sandbox_event(
        self, run_id: int, step: int, kind: str, backend: str, detail: str
    ) -> None:
        """Record a sandbox lifecycle fact (create, exec, cap_hit, destroy)."""
        await self._exec(
            "INSERT INTO sandbox_events (run_id, step, kind, backend, detail) VALUES (?,?,?,?,?)",
            (run_id, step, kind, backend, detail),
        )

    async def sandbox_events(self, run_id: int) -> list[SandboxEventRow]:
        """Sandbox lifecycle rows of a run."""
        rows = await self._rows(
            "SELECT * FROM sandbox_events WHERE run_id = ? ORDER BY id", (run_id,)
        )
        return [SandboxEventRow(**row) for row in rows]

"""The trace around the steps: the event log, model-call accounting, criterion runs, sandbox."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ioh_tui.store.base import Db
from ioh_tui.store.errors import StoreError, decoded
from ioh_tui.store.eventrows import KeySets, Names, named, pack, unpack
from ioh_tui.store.rows import EventRow, GateAttemptRow, ProviderCallRow, SandboxEventRow
from ioh_tui.store.texts import SHARED_FROM, keep, unpacked


class Trace(Db):
    """The `events`, `provider_calls`, `gate_attempts` and `sandbox_events` tables."""

    async def add_events(self, events: Sequence[LoggedEvent]) -> None:
        """Append engine events (run id, agent id, kind, JSON form) to the event log, in order.

        One transaction on the store's thread for the batch (`write_events`).
        """
        if not events:
            return
        sets = self._event_keys
        fresh: dict[Names, int] = {}
        await self._atomically(lambda conn: write_events(conn, events, sets, fresh))
        sets.learn(fresh)

    async def events(self, run_id: int, *, after_id: int = 0) -> list[EventRow]:
        """Logged events of a run (or of a whole tree, by root id), oldest first."""
        path = self.path
        sets = self._event_keys

        def read(conn: sqlite3.Connection) -> list[EventRow]:
            rows = conn.execute(
                "SELECT id, agent_id, step, kind, json, at, texts FROM events WHERE run_id = ?"
                " AND id > ? ORDER BY id",
                (run_id, after_id),
            ).fetchall()
            stored = [decoded(row[4], path, f"event {row[0]}") for row in rows]
            refs = {row[0]: decoded(row[6], path, f"event {row[0]}") for row in rows if row[6]}
            texts = _texts(conn, path, (i for r in refs.values() for i in r.values()))
            wanted = {i for i in map(named, stored) if i is not None}
            names = sets.names_of(conn, wanted) if wanted else None
            events = []
            for row, held in zip(rows, stored, strict=True):
                try:
                    data = unpack(
                        held, kind=row[3], run_id=run_id, agent_id=row[1], step=row[2], names=names
                    )
                except (ValueError, TypeError) as exc:
                    raise StoreError(f"store {path} is damaged: event {row[0]} {exc}") from None
                for key, text_id in refs.get(row[0], {}).items():
                    data[key] = texts.get(text_id, "")
                events.append(EventRow(row[0], row[3], data, row[5]))
            return events

        return await self._on_thread(read)

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


def write_provider_calls(
    conn: sqlite3.Connection, run_id: int, step: int, rows: Sequence[dict[str, Any]]
) -> None:
    """Insert accounting rows (each: the columns besides `run_id` and `step`, by name).

    The SQL text depends only on the columns named, so `sqlite3` prepares it once per shape.
    """
    for row in rows:
        values = {"run_id": run_id, "step": step, **row}
        conn.execute(
            f"INSERT INTO provider_calls ({', '.join(values)})"
            f" VALUES ({', '.join('?' * len(values))})",
            tuple(values.values()),
        )


def _texts(conn: sqlite3.Connection, path: str, ids: Iterable[int]) -> dict[int, str]:
    """The texts of `ids`, by id (in chunks under SQLite's parameter limit)."""
    wanted = sorted(set(ids))
    found: dict[int, str] = {}
    for start in range(0, len(wanted), 500):
        chunk = wanted[start : start + 500]
        marks = ",".join("?" * len(chunk))
        for i, held in conn.execute(f"SELECT id, text FROM texts WHERE id IN ({marks})", chunk):
            found[i] = unpacked(held, path, f"text {i}")
    return found


LoggedEvent = tuple[int, int | None, str, dict[str, Any]]
"""An event as the log takes it: run id, agent id, kind, its JSON form."""


def write_events(
    conn: sqlite3.Connection,
    events: Sequence[LoggedEvent],
    sets: KeySets,
    fresh: dict[Names, int],
) -> None:
    """Insert event rows, in the caller's transaction; `fresh` gets the key lists it added.

    A long text value (a tool's output) is stored once in `texts` (`texts.py`) and the event's
    JSON holds null in its place; the JSON is kept without its key names (`eventrows.py`).
    """

    def names(keys: Names) -> int:
        return sets.id_of(conn, keys, fresh)

    rows = []
    for run_id, agent_id, kind, data in events:
        refs: dict[str, int] = {}
        for key, value in data.items():
            if isinstance(value, str) and len(value) >= SHARED_FROM:
                text = keep(conn, value)
                assert text is not None
                refs[key] = text
        shown = {**data, **dict.fromkeys(refs)} if refs else data
        rows.append(
            (
                run_id,
                agent_id,
                data.get("step"),
                kind,
                pack(shown, kind=kind, run_id=run_id, agent_id=agent_id, names=names),
                json.dumps(refs) if refs else None,
            )
        )
    conn.executemany(
        "INSERT INTO events (run_id, agent_id, step, kind, json, texts) VALUES (?,?,?,?,?,?)",
        rows,
    )


def riding(
    events: Sequence[LoggedEvent], sets: KeySets, fresh: dict[Names, int]
) -> Callable[[sqlite3.Connection], None] | None:
    """`write_events` for another write's transaction (`Db._atomically`'s `kept`), or None.

    If it fails, `fresh` is emptied: the savepoint undoes the key lists it added.
    """
    if not events:
        return None

    def kept(conn: sqlite3.Connection) -> None:
        try:
            write_events(conn, events, sets, fresh)
        except BaseException:
            fresh.clear()
            raise

    return kept

"""Store: one aiosqlite connection in WAL mode, migrated on open; all reads and writes of the trace.

Timestamps come from SQLite's clock so that budgets measured across processes (and crashes) agree.
Writes are autocommitted one by one, except a step's commit, which is one transaction.

Why one long module: every table's reads and writes go through one connection, one lock and the
same few helpers, and the methods are short and flat. Split it by table family (runs and steps;
decisions and leases; trees) when a family grows, not before.
"""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
from collections.abc import AsyncIterator, Iterable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiosqlite

from ioh_tui.core.errors import ConflictError, ResumeError
from ioh_tui.store.schema import MIGRATIONS, SCHEMA_VERSION

NOW = "strftime('%Y-%m-%dT%H:%M:%fZ','now')"


@dataclass(frozen=True, slots=True)
class RunRow:
    """One row of `runs`, with its totals."""

    id: int
    goal: str
    mode: str
    root: str
    subject: str | None
    contract: dict[str, Any]
    provider: str
    model: str | None
    sandbox: str
    parent_run_id: int | None
    root_run_id: int | None
    depth: int
    agent_label: str
    status: str
    outcome: str | None
    detail: str
    started_at: str
    finished_at: str | None
    steps: int
    tokens: int


@dataclass(frozen=True, slots=True)
class StepCommit:
    """Everything one step writes in its single transaction."""

    run_id: int
    step: int
    decision: str
    tool_call: str
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    messages: Sequence[dict[str, Any]]
    """Transcript messages: role, content, tool_calls (list), tool_call_id."""
    tool_calls: Sequence[dict[str, Any]]
    """call_id, name, arguments (dict), ok, refused, summary, output."""
    lease_owner: str | None = None
    lease_generation: int | None = None


class Store:
    """The SQLite trace. Use `async with Store.open(path) as store:` or `Store.memory()`."""

    def __init__(self, db: aiosqlite.Connection, path: str) -> None:
        self._db = db
        self.path = path
        # One connection serves every coroutine (a whole tree of agents): a transaction must not
        # interleave with another coroutine's statements, which would join it.
        self._lock = asyncio.Lock()

    @classmethod
    @asynccontextmanager
    async def open(cls, path: str | Path) -> AsyncIterator[Store]:
        """Open (creating and migrating) the store at `path`."""
        path = str(path)
        if path != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        db = await aiosqlite.connect(path, isolation_level=None)
        try:
            db.row_factory = sqlite3.Row
            await db.execute("PRAGMA busy_timeout = 5000")
            if path != ":memory:":
                await db.execute("PRAGMA journal_mode = WAL")
            await db.execute("PRAGMA synchronous = NORMAL")
            store = cls(db, path)
            await store._migrate()
            yield store
        finally:
            await db.close()

    @classmethod
    def memory(cls) -> Any:
        """An in-memory store (for tests and throwaway runs)."""
        return cls.open(":memory:")

    async def _migrate(self) -> None:
        version = await self._scalar("PRAGMA user_version")
        if version > SCHEMA_VERSION:
            raise ResumeError(
                f"store format {version} is newer than this ioh-tui understands ({SCHEMA_VERSION})"
            )
        for index in range(version, SCHEMA_VERSION):
            await self._db.execute("BEGIN IMMEDIATE")  # at open: nothing else uses the store yet
            for statement in _statements(MIGRATIONS[index]):
                await self._db.execute(statement)
            await self._db.execute(f"PRAGMA user_version = {index + 1}")
            await self._db.execute("COMMIT")

    # -- small helpers -------------------------------------------------------------------------

    async def _scalar(self, sql: str, params: Iterable[Any] = ()) -> Any:
        async with self._db.execute(sql, tuple(params)) as cur:
            row = await cur.fetchone()
        return None if row is None else row[0]

    async def _rows(self, sql: str, params: Iterable[Any] = ()) -> list[dict[str, Any]]:
        async with self._db.execute(sql, tuple(params)) as cur:
            rows = await cur.fetchall()
        return [dict(r) for r in rows]

    async def _exec(self, sql: str, params: Iterable[Any] = ()) -> int:
        """One write outside any transaction; returns the rows it changed."""
        async with self._lock, self._db.execute(sql, tuple(params)) as cur:
            return int(cur.rowcount)

    async def _insert(self, sql: str, params: Iterable[Any]) -> int:
        async with self._lock, self._db.execute(sql, tuple(params)) as cur:
            rowid = cur.lastrowid
        assert rowid is not None
        return rowid

    async def now(self) -> str:
        """The database clock, ISO-8601 UTC with milliseconds."""
        value: str = await self._scalar(f"SELECT {NOW}")
        return value

    # -- runs ----------------------------------------------------------------------------------

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
    ) -> int:
        """Create a run row in status `running`; return its id."""
        run_id = await self._insert(
            "INSERT INTO runs (goal, mode, root, subject, contract, provider, model, sandbox,"
            " parent_run_id, root_run_id, depth, agent_label) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
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
        )
        if root_run_id is None:
            await self._exec("UPDATE runs SET root_run_id = id WHERE id = ?", (run_id,))
        return run_id

    async def set_run_driver(
        self, run_id: int, *, provider: str, model: str | None, sandbox: str
    ) -> None:
        """Record which provider, model and sandbox drive the run now (a resume may change them)."""
        await self._exec(
            "UPDATE runs SET provider = ?, model = ?, sandbox = ?, status = 'running' WHERE id = ?",
            (provider, model, sandbox, run_id),
        )

    async def set_agent_label(self, run_id: int, label: str) -> None:
        """Name a sub-agent (its label appears in events, decisions and the tree view)."""
        await self._exec("UPDATE runs SET agent_label = ? WHERE id = ?", (label, run_id))

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
        out = []
        for row in rows:
            row["contract"] = json.loads(row["contract"])
            out.append(RunRow(**row))
        return out

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

    # -- the step commit -----------------------------------------------------------------------

    async def commit_step(self, commit: StepCommit) -> None:
        """Write one step, its transcript messages and tool calls in one transaction.

        With a lease, the generation is checked inside the transaction: a driver that lost its
        lease writes nothing and gets `ConflictError`.
        """
        async with self._lock:
            db = self._db
            await db.execute("BEGIN IMMEDIATE")
            try:
                if commit.lease_owner is not None:
                    cur = await db.execute(
                        f"UPDATE run_leases SET renewed_at = {NOW} WHERE run_id = ? AND owner = ?"
                        " AND generation = ?",
                        (commit.run_id, commit.lease_owner, commit.lease_generation),
                    )
                    if cur.rowcount != 1:
                        raise ConflictError(commit.run_id, "another driver took over the lease")
                await db.execute(
                    "INSERT INTO steps (run_id, step, decision, tool_call, tokens, input_tokens,"
                    " output_tokens, cost_usd) VALUES (?,?,?,?,?,?,?,?)",
                    (
                        commit.run_id,
                        commit.step,
                        commit.decision,
                        commit.tool_call,
                        commit.input_tokens + commit.output_tokens,
                        commit.input_tokens,
                        commit.output_tokens,
                        commit.cost_usd,
                    ),
                )
                await self._write_messages(commit.run_id, commit.step, commit.messages, base=0)
                await self._write_tool_calls(commit.run_id, commit.step, commit.tool_calls, base=0)
                await db.execute(
                    "DELETE FROM staged_turns WHERE run_id = ? AND step = ?",
                    (commit.run_id, commit.step),
                )
                await db.execute("COMMIT")
            except BaseException:
                await db.execute("ROLLBACK")
                raise

    async def stage_turn(self, run_id: int, step: int, completion: dict[str, Any]) -> None:
        """Keep a model turn before its tools run: a resumed step reuses it, never re-asks."""
        await self._exec(
            "INSERT OR REPLACE INTO staged_turns (run_id, step, completion) VALUES (?,?,?)",
            (run_id, step, json.dumps(completion)),
        )

    async def staged_turn(self, run_id: int, step: int) -> dict[str, Any] | None:
        """The staged model turn of an uncommitted step, if any."""
        text = await self._scalar(
            "SELECT completion FROM staged_turns WHERE run_id = ? AND step = ?", (run_id, step)
        )
        return None if text is None else dict(json.loads(text))

    async def append_to_step(
        self,
        run_id: int,
        step: int,
        messages: Sequence[dict[str, Any]],
        tool_calls: Sequence[dict[str, Any]],
    ) -> None:
        """Add messages and tool calls to a committed step (a paused step's answers), atomically."""
        async with self._lock:
            db = self._db
            await db.execute("BEGIN IMMEDIATE")
            try:
                await self._write_messages(run_id, step, messages)
                await self._write_tool_calls(run_id, step, tool_calls)
                await db.execute("COMMIT")
            except BaseException:
                await db.execute("ROLLBACK")
                raise

    async def _write_messages(
        self, run_id: int, step: int, messages: Sequence[dict[str, Any]], base: int | None = None
    ) -> None:
        """Insert transcript rows after the step's last (`base` 0 for a new step saves a query)."""
        if base is None:
            base = await self._scalar(
                "SELECT COALESCE(MAX(seq), -1) + 1 FROM messages WHERE run_id = ? AND step = ?",
                (run_id, step),
            )
        await self._db.executemany(
            "INSERT INTO messages (run_id, step, seq, role, content, tool_calls, tool_call_id)"
            " VALUES (?,?,?,?,?,?,?)",
            [
                (
                    run_id,
                    step,
                    base + i,
                    m["role"],
                    m["content"],
                    json.dumps(m.get("tool_calls", [])),
                    m.get("tool_call_id"),
                )
                for i, m in enumerate(messages)
            ],
        )

    async def _write_tool_calls(
        self, run_id: int, step: int, calls: Sequence[dict[str, Any]], base: int | None = None
    ) -> None:
        if base is None:
            base = await self._scalar(
                "SELECT COALESCE(MAX(seq), -1) + 1 FROM tool_calls WHERE run_id = ? AND step = ?",
                (run_id, step),
            )
        await self._db.executemany(
            "INSERT INTO tool_calls (run_id, step, seq, call_id, name, arguments, ok, refused,"
            " summary, output) VALUES (?,?,?,?,?,?,?,?,?,?)",
            [
                (
                    run_id,
                    step,
                    base + i,
                    c["call_id"],
                    c["name"],
                    json.dumps(c["arguments"], sort_keys=True),
                    int(c["ok"]),
                    int(c["refused"]),
                    c["summary"],
                    c["output"],
                )
                for i, c in enumerate(calls)
            ],
        )

    async def messages(self, run_id: int) -> list[dict[str, Any]]:
        """The run's committed transcript, in order."""
        rows = await self._rows(
            "SELECT step, seq, role, content, tool_calls, tool_call_id FROM messages"
            " WHERE run_id = ? ORDER BY step, seq",
            (run_id,),
        )
        for row in rows:
            row["tool_calls"] = json.loads(row["tool_calls"])
        return rows

    async def steps(self, run_id: int) -> list[dict[str, Any]]:
        """The run's committed steps."""
        return await self._rows("SELECT * FROM steps WHERE run_id = ? ORDER BY step", (run_id,))

    async def tool_calls(self, run_id: int) -> list[dict[str, Any]]:
        """The run's recorded tool calls, in order."""
        rows = await self._rows(
            "SELECT * FROM tool_calls WHERE run_id = ? ORDER BY step, seq", (run_id,)
        )
        for row in rows:
            row["arguments"] = json.loads(row["arguments"])
            row["ok"] = bool(row["ok"])
            row["refused"] = bool(row["refused"])
        return rows

    # -- journal of calls whose effect must not repeat ------------------------------------------

    async def open_attempt(
        self, run_id: int, step: int, seq: int, call_id: str, name: str, arguments: dict[str, Any]
    ) -> int:
        """Journal a mutating tool call before it runs."""
        return await self._insert(
            "INSERT INTO tool_attempts (run_id, step, seq, call_id, name, arguments)"
            " VALUES (?,?,?,?,?,?)",
            (run_id, step, seq, call_id, name, json.dumps(arguments, sort_keys=True)),
        )

    async def note_intent(self, attempt_id: int, intent: dict[str, Any]) -> None:
        """Record what a journalled call is about to do (so a resume can tell whether it did)."""
        await self._exec(
            "UPDATE tool_attempts SET intent = ? WHERE id = ?", (json.dumps(intent), attempt_id)
        )

    async def close_attempt(
        self, attempt_id: int, result: dict[str, Any], resolution: str = "ran"
    ) -> None:
        """Record that a journalled call finished, with its result."""
        await self._exec(
            f"UPDATE tool_attempts SET completed_at = {NOW}, result = ?, resolution = ?"
            " WHERE id = ?",
            (json.dumps(result), resolution, attempt_id),
        )

    async def attempts(self, run_id: int, step: int | None = None) -> list[dict[str, Any]]:
        """Journalled calls of a run (of one step when given)."""
        sql = "SELECT * FROM tool_attempts WHERE run_id = ?"
        params: list[Any] = [run_id]
        if step is not None:
            sql += " AND step = ?"
            params.append(step)
        rows = await self._rows(sql + " ORDER BY id", params)
        for row in rows:
            row["arguments"] = json.loads(row["arguments"])
            row["result"] = json.loads(row["result"]) if row["result"] else None
            row["intent"] = json.loads(row["intent"]) if row["intent"] else None
        return rows

    # -- events, accounting, gates, sandbox --------------------------------------------------

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

    async def events(self, run_id: int, *, after_id: int = 0) -> list[dict[str, Any]]:
        """Logged events of a run (or of a whole tree, by root id), oldest first."""
        rows = await self._rows(
            "SELECT id, kind, json, at FROM events WHERE run_id = ? AND id > ? ORDER BY id",
            (run_id, after_id),
        )
        for row in rows:
            row["json"] = json.loads(row["json"])
        return rows

    async def add_provider_call(self, run_id: int, step: int, row: dict[str, Any]) -> None:
        """One accounting row per model-call attempt."""
        cols = ["run_id", "step", *row]
        await self._exec(
            f"INSERT INTO provider_calls ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
            (run_id, step, *row.values()),
        )

    async def provider_calls(self, run_id: int) -> list[dict[str, Any]]:
        """Accounting rows of a run, in order."""
        return await self._rows(
            "SELECT * FROM provider_calls WHERE run_id = ? ORDER BY id", (run_id,)
        )

    async def add_gate_attempt(
        self, run_id: int, step: int, criterion: str, status: str, detail: str
    ) -> None:
        """Record one evaluation of the success criterion."""
        await self._exec(
            "INSERT INTO gate_attempts (run_id, step, criterion, status, detail)"
            " VALUES (?,?,?,?,?)",
            (run_id, step, criterion, status, detail),
        )

    async def gate_attempts(self, run_id: int) -> list[dict[str, Any]]:
        """Evaluations of the criterion, in order."""
        return await self._rows(
            "SELECT * FROM gate_attempts WHERE run_id = ? ORDER BY id", (run_id,)
        )

    async def add_sandbox_event(
        self, run_id: int, step: int, kind: str, backend: str, detail: str
    ) -> None:
        """Record a sandbox lifecycle fact (create, exec, cap_hit, destroy)."""
        await self._exec(
            "INSERT INTO sandbox_events (run_id, step, kind, backend, detail) VALUES (?,?,?,?,?)",
            (run_id, step, kind, backend, detail),
        )

    async def sandbox_events(self, run_id: int) -> list[dict[str, Any]]:
        """Sandbox lifecycle rows of a run."""
        return await self._rows(
            "SELECT * FROM sandbox_events WHERE run_id = ? ORDER BY id", (run_id,)
        )

    # -- policy and approvals ------------------------------------------------------------------

    async def set_policy(self, run_id: int, policy_json: str) -> None:
        """Record the policy the run is driven under."""
        await self._exec(
            "INSERT OR REPLACE INTO run_policies (run_id, policy) VALUES (?, ?)",
            (run_id, policy_json),
        )

    async def policy(self, run_id: int) -> str | None:
        """The recorded policy (JSON), if any."""
        value: str | None = await self._scalar(
            "SELECT policy FROM run_policies WHERE run_id = ?", (run_id,)
        )
        return value

    async def add_policy_event(
        self,
        run_id: int,
        step: int,
        *,
        kind: str,
        act: str,
        target: str,
        rule: str | None,
        layer: str | None,
        decision: str | None = None,
        source: str | None = None,
    ) -> None:
        """Record a refusal or a decision."""
        await self._exec(
            "INSERT INTO policy_events"
            " (run_id, step, kind, act, target, rule, layer, decision, source)"
            " VALUES (?,?,?,?,?,?,?,?,?)",
            (run_id, step, kind, act, target, rule, layer, decision, source),
        )

    async def policy_events(self, run_id: int) -> list[dict[str, Any]]:
        """Refusals and decisions of a run."""
        return await self._rows(
            "SELECT * FROM policy_events WHERE run_id = ? ORDER BY id", (run_id,)
        )

    async def create_approval(self, run_id: int, step: int, fields: dict[str, Any]) -> int:
        """Persist a pending request, exactly as shown, before anyone is asked."""
        cols = ["run_id", "step", *fields]
        return await self._insert(
            f"INSERT INTO approvals ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
            (run_id, step, *fields.values()),
        )

    async def resolve_approval(
        self,
        request_id: int,
        *,
        status: str,
        by: str,
        reason: str | None = None,
        performed_target: str | None = None,
        performed_content: str | None = None,
        remembered: Sequence[str] = (),
    ) -> bool:
        """Answer a pending request; True only for the one caller whose answer landed."""
        changed = await self._exec(
            f"UPDATE approvals SET status = ?, decided_by = ?, reason = ?, performed_target = ?,"
            f" performed_content = ?, remembered = ?, resolved_at = {NOW}"
            " WHERE id = ? AND status = 'pending'",
            (
                status,
                by,
                reason,
                performed_target,
                performed_content,
                json.dumps(list(remembered)),
                request_id,
            ),
        )
        return changed == 1

    async def abandon_approvals(self, run_id: int, *, after_step: int) -> None:
        """Close the requests a dead driver left unanswered in steps it never committed."""
        await self._exec(
            f"UPDATE approvals SET status = 'abandoned', decided_by = 'resume', resolved_at = {NOW}"
            " WHERE run_id = ? AND step > ? AND status = 'pending'",
            (run_id, after_step),
        )

    async def approval(self, request_id: int) -> dict[str, Any] | None:
        """One request with its resolution."""
        rows = await self._rows("SELECT * FROM approvals WHERE id = ?", (request_id,))
        return rows[0] if rows else None

    async def approvals(
        self, run_id: int | None = None, *, pending_only: bool = False
    ) -> list[dict[str, Any]]:
        """Requests of one run (or of all runs), with each run's goal."""
        sql = "SELECT a.*, r.goal AS goal FROM approvals a JOIN runs r ON r.id = a.run_id WHERE 1=1"
        params: list[Any] = []
        if run_id is not None:
            sql += " AND a.run_id = ?"
            params.append(run_id)
        if pending_only:
            sql += " AND a.status = 'pending'"
        return await self._rows(sql + " ORDER BY a.id", params)

    # -- sub-agent trees ----------------------------------------------------------------------

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

    # -- leases: one driver per run -----------------------------------------------------------

    async def acquire_lease(self, run_id: int, owner: str, ttl_s: float) -> int:
        """Take the run's lease (or take over a dead or expired owner's); return the generation."""
        async with self._lock:
            db = self._db
            await db.execute("BEGIN IMMEDIATE")
            try:
                rows = await self._rows(
                    "SELECT owner, generation, (julianday('now') - julianday(renewed_at)) * 86400.0"
                    " AS age, ttl_s FROM run_leases WHERE run_id = ?",
                    (run_id,),
                )
                if not rows:
                    generation = 1
                    await db.execute(
                        "INSERT INTO run_leases (run_id, owner, generation, ttl_s)"
                        " VALUES (?,?,?,?)",
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
                await db.execute("COMMIT")
            except BaseException:
                await db.execute("ROLLBACK")
                raise
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
    """Whether the process named in an owner id (`<pid>-...`) is alive; unknown counts as alive."""
    try:
        pid = int(owner.split("-", 1)[0])
    except ValueError:
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _statements(script: str) -> list[str]:
    """Split a DDL script into statements (the DDL has no semicolons inside literals)."""
    return [s.strip() for s in script.split(";") if s.strip()]

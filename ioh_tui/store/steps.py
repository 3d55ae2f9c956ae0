"""Steps: the one-transaction step commit, the staged model turn, and the journal of effects.

A step's model turn is staged before its tools run, and each call with an effect is journalled
(opened, given its intent, closed): what a resumed step reuses instead of asking or acting again.
The commit writes the step, its transcript messages and its tool calls together, and drops the
staged turn.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ioh_tui.core.codec import (
    completion_from_json,
    completion_to_json,
    image_from_json,
    image_to_json,
    thoughts_from_json,
    thoughts_to_json,
    tool_call_from_json,
    tool_call_to_json,
)
from ioh_tui.core.errors import ConflictError
from ioh_tui.core.transcript import Completion, Image, Message
from ioh_tui.store.base import NOW, Db
from ioh_tui.store.errors import decoded
from ioh_tui.store.eventrows import Names
from ioh_tui.store.rows import AttemptRow, CallRecord, MessageRow, StepRow, ToolCallRow
from ioh_tui.store.texts import keep, unpacked
from ioh_tui.store.trace import LoggedEvent, riding, write_provider_calls


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
    messages: Sequence[Message]
    tool_calls: Sequence[CallRecord]
    lease_owner: str | None = None
    lease_generation: int | None = None


class Steps(Db):
    """The `steps`, `messages`, `tool_calls`, `staged_turns` and `tool_attempts` tables."""

    async def commit_step(self, commit: StepCommit, logged: Sequence[LoggedEvent] = ()) -> None:
        """Write one step, its transcript messages and tool calls in one transaction.

        The whole transaction is one call on the store's thread (`Db._atomically`). With a
        lease, the generation is checked inside the transaction: a driver that lost its lease
        writes nothing and gets `ConflictError`. `logged`: events for the log, written in the
        same hop and kept even if the step is not (`EventLog.take`).
        """

        def write(conn: sqlite3.Connection) -> None:
            if commit.lease_owner is not None:
                cur = conn.execute(
                    f"UPDATE run_leases SET renewed_at = {NOW} WHERE run_id = ? AND owner = ?"
                    " AND generation = ?",
                    (commit.run_id, commit.lease_owner, commit.lease_generation),
                )
                if cur.rowcount != 1:
                    raise ConflictError(commit.run_id, "another driver took over the lease")
            conn.execute(
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
            _write_messages(conn, commit.run_id, commit.step, commit.messages, base=0)
            _write_tool_calls(conn, commit.run_id, commit.step, commit.tool_calls, base=0)
            conn.execute(
                "DELETE FROM staged_turns WHERE run_id = ? AND step = ?",
                (commit.run_id, commit.step),
            )

        await self._with_log(write, logged)

    async def _with_log(
        self, write: Callable[[sqlite3.Connection], None], logged: Sequence[LoggedEvent]
    ) -> None:
        """`write` in one transaction, with `logged` riding along (`Db._atomically`'s `kept`)."""
        fresh: dict[Names, int] = {}
        await self._atomically(write, riding(logged, self._event_keys, fresh))
        self._event_keys.learn(fresh)

    async def stage_turn(
        self,
        run_id: int,
        step: int,
        completion: Completion,
        calls: Sequence[dict[str, Any]] = (),
        logged: Sequence[LoggedEvent] = (),
    ) -> None:
        """Keep a model turn before its tools run: a resumed step reuses it, never re-asks.

        `calls` are the turn's accounting rows (`add_provider_call`'s), written in the same
        transaction: one hop for both, and a crash keeps the turn and what it cost together.
        `logged`: events for the log, as for `commit_step`.
        """
        text = json.dumps(completion_to_json(completion))

        def write(conn: sqlite3.Connection) -> None:
            write_provider_calls(conn, run_id, step, calls)
            conn.execute(
                "INSERT OR REPLACE INTO staged_turns (run_id, step, completion) VALUES (?,?,?)",
                (run_id, step, text),
            )

        await self._with_log(write, logged)

    async def staged_turn(self, run_id: int, step: int) -> Completion | None:
        """The staged model turn of an uncommitted step, if any."""
        text = await self._scalar(
            "SELECT completion FROM staged_turns WHERE run_id = ? AND step = ?", (run_id, step)
        )
        return (
            None
            if text is None
            else completion_from_json(
                decoded(text, self.path, f"run {run_id}'s staged turn {step}")
            )
        )

    async def append_to_step(
        self,
        run_id: int,
        step: int,
        messages: Sequence[Message],
        tool_calls: Sequence[CallRecord],
    ) -> None:
        """Add messages and tool calls to a committed step (a paused step's answers), atomically."""

        def write(conn: sqlite3.Connection) -> None:
            _write_messages(conn, run_id, step, messages)
            _write_tool_calls(conn, run_id, step, tool_calls)

        await self._atomically(write)

    async def messages(self, run_id: int) -> list[MessageRow]:
        """The run's committed transcript, in order."""
        rows = await self._rows(
            "SELECT m.step, m.seq, m.role, COALESCE(t.text, m.content) AS content, m.tool_calls,"
            " m.tool_call_id, m.images, m.thoughts"
            " FROM messages m LEFT JOIN texts t ON t.id = m.content_text"
            " WHERE m.run_id = ? ORDER BY m.step, m.seq",
            (run_id,),
        )
        for row in rows:
            row["content"] = unpacked(row["content"], self.path, f"run {run_id}'s message")
            calls = decoded(row["tool_calls"], self.path, f"run {run_id}'s message tool calls")
            row["tool_calls"] = tuple(tool_call_from_json(c) for c in calls)
            shown = row["images"]
            images = decoded(shown, self.path, f"run {run_id}'s message images") if shown else []
            row["images"] = tuple(image_from_json(i) for i in images)
            thought = row["thoughts"]
            blocks = decoded(thought, self.path, f"run {run_id}'s reasoning") if thought else []
            row["thoughts"] = thoughts_from_json(blocks)
        return [MessageRow(**row) for row in rows]

    async def tool_images(self, run_id: int, step: int, call_id: str) -> tuple[Image, ...]:
        """The images a committed step's tool result showed the model (none before it commits).

        One call's, read alone: the app draws an image from here, and a long run's every
        message (with every image's bytes) is far more than one call's.
        """
        shown = await self._scalar(
            "SELECT images FROM messages WHERE run_id = ? AND step = ? AND tool_call_id = ?"
            " AND images IS NOT NULL",
            (run_id, step, call_id),
        )
        if shown is None:
            return ()
        images = decoded(shown, self.path, f"run {run_id}'s message images")
        return tuple(image_from_json(i) for i in images)

    async def steps(self, run_id: int) -> list[StepRow]:
        """The run's committed steps."""
        rows = await self._rows("SELECT * FROM steps WHERE run_id = ? ORDER BY step", (run_id,))
        return [StepRow(**row) for row in rows]

    async def tool_calls(self, run_id: int) -> list[ToolCallRow]:
        """The run's recorded tool calls, in order."""
        rows = await self._rows(
            "SELECT c.id, c.run_id, c.step, c.seq, c.call_id, c.name, c.arguments, c.ok,"
            " c.refused, c.summary, COALESCE(t.text, c.output) AS output FROM tool_calls c"
            " LEFT JOIN texts t ON t.id = c.output_text WHERE c.run_id = ? ORDER BY c.step, c.seq",
            (run_id,),
        )
        return [
            ToolCallRow(
                **{
                    **row,
                    "arguments": decoded(row["arguments"], self.path, f"tool call {row['id']}"),
                    "output": unpacked(row["output"], self.path, f"tool call {row['id']}"),
                    "ok": bool(row["ok"]),
                    "refused": bool(row["refused"]),
                }
            )
            for row in rows
        ]

    # -- the journal of calls whose effect must not repeat ---------------------------------------

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

    async def attempts(self, run_id: int, step: int | None = None) -> list[AttemptRow]:
        """Journalled calls of a run (of one step when given)."""
        sql = "SELECT * FROM tool_attempts WHERE run_id = ?"
        params: list[Any] = [run_id]
        if step is not None:
            sql += " AND step = ?"
            params.append(step)
        rows = await self._rows(sql + " ORDER BY id", params)
        return [
            AttemptRow(
                **{
                    **row,
                    "arguments": decoded(row["arguments"], self.path, f"attempt {row['id']}"),
                    "result": decoded(row["result"], self.path, f"attempt {row['id']}")
                    if row["result"]
                    else None,
                    "intent": decoded(row["intent"], self.path, f"attempt {row['id']}")
                    if row["intent"]
                    else None,
                }
            )
            for row in rows
        ]


def _write_messages(
    conn: sqlite3.Connection,
    run_id: int,
    step: int,
    messages: Sequence[Message],
    base: int | None = None,
) -> None:
    """Insert transcript rows after the step's last (`base` 0 for a new step saves a query)."""
    if base is None:
        base = _next_seq(conn, "messages", run_id, step)
    rows = []
    for i, m in enumerate(messages):
        text = keep(conn, m.content)
        rows.append(
            (
                run_id,
                step,
                base + i,
                m.role,
                m.content if text is None else "",
                json.dumps([tool_call_to_json(c) for c in m.tool_calls]),
                m.tool_call_id,
                text,
                json.dumps([image_to_json(i) for i in m.images]) if m.images else None,
                json.dumps(thoughts_to_json(m.thoughts)) if m.thoughts else None,
            )
        )
    conn.executemany(
        "INSERT INTO messages (run_id, step, seq, role, content, tool_calls, tool_call_id,"
        " content_text, images, thoughts) VALUES (?,?,?,?,?,?,?,?,?,?)",
        rows,
    )


def _write_tool_calls(
    conn: sqlite3.Connection,
    run_id: int,
    step: int,
    calls: Sequence[CallRecord],
    base: int | None = None,
) -> None:
    if base is None:
        base = _next_seq(conn, "tool_calls", run_id, step)
    rows = []
    for i, c in enumerate(calls):
        text = keep(conn, c.output)
        rows.append(
            (
                run_id,
                step,
                base + i,
                c.call_id,
                c.name,
                json.dumps(c.arguments, sort_keys=True),
                int(c.ok),
                int(c.refused),
                c.summary,
                c.output if text is None else "",
                text,
            )
        )
    conn.executemany(
        "INSERT INTO tool_calls (run_id, step, seq, call_id, name, arguments, ok, refused,"
        " summary, output, output_text) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
        rows,
    )


def _next_seq(conn: sqlite3.Connection, table: str, run_id: int, step: int) -> int:
    row = conn.execute(
        f"SELECT COALESCE(MAX(seq), -1) + 1 FROM {table} WHERE run_id = ? AND step = ?",
        (run_id, step),
    ).fetchone()
    return int(row[0])

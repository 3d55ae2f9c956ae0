"""Decisions: the run's policy, its refusals and decisions, and the approvals a person answers.

An ask is persisted (`create_approval`) before anyone is asked, exactly as it is shown; whoever
answers first (the run's approver, the queue, another process) wins, and only once.

Every answer is sealed as it is written (`seal.py`), and a row whose answer does not carry a valid
seal is read as still pending (`ApprovalRow.forged`): whatever else can write the store cannot
answer for the operator. A forged answer is taken off its row, and recorded as a refusal, by the
first writer or the waiting run that meets it (`refuse_forged`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import aiosqlite

from ioh_tui.core.acts import Act, Answer
from ioh_tui.store.base import NOW, Db
from ioh_tui.store.rows import ApprovalRow, PolicyEventRow
from ioh_tui.store.seal import Sealed, seal, verifies

_APPROVALS = "SELECT a.*, r.goal AS goal FROM approvals a JOIN runs r ON r.id = a.run_id"
_ANSWER_COLUMNS = ("decided_by", "reason", "performed_target", "performed_content", "resolved_at")
_FORGED_RULE = "a forged answer (its seal does not verify)"


class Decisions(Db):
    """The `run_policies`, `policy_events` and `approvals` tables."""

    path: str
    """The store's file (its key lives beside it), or `:memory:`."""

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

    async def policy_events(self, run_id: int) -> list[PolicyEventRow]:
        """Refusals and decisions of a run."""
        rows = await self._rows(
            "SELECT * FROM policy_events WHERE run_id = ? ORDER BY id", (run_id,)
        )
        return [PolicyEventRow(**{**row, "act": Act(row["act"])}) for row in rows]

    async def create_approval(self, run_id: int, step: int, fields: dict[str, Any]) -> int:
        """Persist a pending request, exactly as shown, before anyone is asked."""
        return await self._insert_columns("approvals", {"run_id": run_id, "step": step, **fields})

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
        """Answer a pending request, sealed; True only for the one caller whose answer landed.

        A forged answer on the row does not count as one: it is refused and replaced.
        """
        async with self._transaction() as db:
            row = await _raw_approval(db, request_id)
            if row is None:
                return False
            if row["status"] != "pending":
                if self._sealed(row):
                    return False
                await self._drop_forged(db, row)
            mac = seal(
                self.path,
                _fields(
                    row,
                    status=status,
                    reason=reason,
                    performed_target=performed_target,
                    performed_content=performed_content,
                    remembered=list(remembered),
                ),
            )
            async with db.execute(
                f"UPDATE approvals SET status = ?, decided_by = ?, reason = ?,"
                f" performed_target = ?, performed_content = ?, remembered = ?,"
                f" answer_mac = ?, resolved_at = {NOW} WHERE id = ? AND status = 'pending'",
                (
                    status,
                    by,
                    reason,
                    performed_target,
                    performed_content,
                    json.dumps(list(remembered)),
                    mac,
                    request_id,
                ),
            ) as cur:
                return cur.rowcount == 1

    async def refuse_forged(self, request_id: int) -> bool:
        """Take a forged answer off its request (it is pending again) and record the refusal.

        Returns:
            True when the row carried a forged answer (now refused), False otherwise.
        """
        async with self._transaction() as db:
            row = await _raw_approval(db, request_id)
            if row is None or row["status"] == "pending" or self._sealed(row):
                return False
            await self._drop_forged(db, row)
            return True

    def _sealed(self, row: dict[str, Any]) -> bool:
        """Whether the answer on a raw `approvals` row carries its valid seal."""
        if not row["answer_mac"]:
            return False  # never sealed (or written before answers were): no key is needed
        try:
            remembered = _remembered(row["remembered"])
        except (ValueError, TypeError):
            return False
        fields = _fields(
            row,
            status=row["status"],
            reason=row["reason"],
            performed_target=row["performed_target"],
            performed_content=row["performed_content"],
            remembered=remembered,
        )
        return verifies(self.path, fields, row["answer_mac"])

    async def _drop_forged(self, db: aiosqlite.Connection, row: dict[str, Any]) -> None:
        cleared = ", ".join(f"{column} = NULL" for column in _ANSWER_COLUMNS)
        await db.execute(
            f"UPDATE approvals SET status = 'pending', {cleared}, remembered = '[]',"
            " answer_mac = NULL WHERE id = ?",
            (row["id"],),
        )
        forged = row["status"] if row["status"] in ("approve", "deny") else None
        await db.execute(
            "INSERT INTO policy_events"
            " (run_id, step, kind, act, target, rule, layer, decision, source)"
            " VALUES (?, ?, 'refusal', ?, ?, ?, 'store', ?, 'store')",
            (row["run_id"], row["step"], row["act"], row["target"], _FORGED_RULE, forged),
        )

    async def answer_approval(self, request_id: int, answer: Answer, *, by: str) -> bool:
        """`resolve_approval` with a decision's answer (`Decision.to_row`)."""
        return await self.resolve_approval(
            request_id,
            status=answer.status,
            by=by,
            reason=answer.reason,
            performed_target=answer.performed_target,
            performed_content=answer.performed_content,
            remembered=answer.remembered,
        )

    async def abandon_approvals(self, run_id: int, *, after_step: int) -> None:
        """Close the requests a dead driver left unanswered in steps it never committed."""
        await self._close_pending(
            "run_id = ? AND step > ?", (run_id, after_step), "abandoned", "resume", None
        )

    async def expire_approvals(self, run_id: int, reason: str) -> None:
        """Close a run's unanswered requests when it ends: no one can answer them any more."""
        await self._close_pending("run_id = ?", (run_id,), "expired", "run ended", reason)

    async def _close_pending(
        self, where: str, params: Sequence[Any], status: str, by: str, reason: str | None
    ) -> None:
        """Close the pending requests `where` selects with `status`, each sealed."""
        async with self._transaction() as db:
            async with db.execute(
                f"SELECT * FROM approvals WHERE {where} AND status = 'pending'", tuple(params)
            ) as cur:
                rows = [dict(r) for r in await cur.fetchall()]
            for row in rows:
                mac = seal(
                    self.path,
                    _fields(
                        row,
                        status=status,
                        reason=reason,
                        performed_target=None,
                        performed_content=None,
                        remembered=[],
                    ),
                )
                await db.execute(
                    "UPDATE approvals SET status = ?, decided_by = ?, reason = ?,"
                    f" remembered = '[]', answer_mac = ?, resolved_at = {NOW} WHERE id = ?",
                    (status, by, reason, mac, row["id"]),
                )

    async def approval(self, request_id: int) -> ApprovalRow | None:
        """One request with its resolution."""
        rows = await self._approval_rows(f"{_APPROVALS} WHERE a.id = ?", (request_id,))
        return rows[0] if rows else None

    async def approvals(
        self, run_id: int | None = None, *, pending_only: bool = False
    ) -> list[ApprovalRow]:
        """Requests of one run (or of all runs), with each run's goal."""
        sql = f"{_APPROVALS} WHERE 1=1"
        params: list[Any] = []
        if run_id is not None:
            sql += " AND a.run_id = ?"
            params.append(run_id)
        rows = await self._approval_rows(sql + " ORDER BY a.id", params)
        # Not in SQL: a forged answer reads as pending, and only its seal tells it apart.
        return [row for row in rows if row.status == "pending"] if pending_only else rows

    async def _approval_rows(self, sql: str, params: Sequence[Any]) -> list[ApprovalRow]:
        rows = await self._rows(sql, params)
        return [self._approval_row(row) for row in rows]

    def _approval_row(self, row: dict[str, Any]) -> ApprovalRow:
        """The typed row; an answer without its valid seal reads as no answer (`forged`)."""
        forged = row["status"] != "pending" and not self._sealed(row)
        del row["answer_mac"]
        if forged or row["status"] == "pending":
            row.update(dict.fromkeys(_ANSWER_COLUMNS), status="pending", remembered="[]")
        return ApprovalRow(
            **{
                **row,
                "act": Act(row["act"]),
                "remembered": _remembered(row["remembered"]),
                "forged": forged,
            }
        )


async def _raw_approval(db: aiosqlite.Connection, request_id: int) -> dict[str, Any] | None:
    async with db.execute("SELECT * FROM approvals WHERE id = ?", (request_id,)) as cur:
        row = await cur.fetchone()
    return None if row is None else dict(row)


def _remembered(text: str | None) -> tuple[str, ...]:
    rules = json.loads(text or "[]")
    if not isinstance(rules, list) or not all(isinstance(r, str) for r in rules):
        raise ValueError("remembered rules are not a list of strings")
    return tuple(rules)


def _fields(
    row: dict[str, Any],
    *,
    status: str,
    reason: str | None,
    performed_target: str | None,
    performed_content: str | None,
    remembered: Sequence[str],
) -> Sealed:
    """What the seal of an answer to the request on `row` covers."""
    return Sealed(
        run_id=row["run_id"],
        request_id=row["id"],
        act=row["act"],
        target=row["target"],
        content=row["content"],
        status=status,
        reason=reason,
        performed_target=performed_target,
        performed_content=performed_content,
        remembered=tuple(remembered),
    )

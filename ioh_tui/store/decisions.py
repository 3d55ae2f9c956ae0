"""Decisions: the run's policy, its refusals and decisions, and the approvals a person answers.

An ask is persisted (`create_approval`) before anyone is asked, exactly as it is shown; whoever
answers first (the run's approver, the queue, another process) wins, and only once.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ioh_tui.core.acts import Act, Answer
from ioh_tui.store.base import NOW, Db
from ioh_tui.store.rows import ApprovalRow, PolicyEventRow

_APPROVALS = "SELECT a.*, r.goal AS goal FROM approvals a JOIN runs r ON r.id = a.run_id"


class Decisions(Db):
    """The `run_policies`, `policy_events` and `approvals` tables."""

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
        await self._exec(
            f"UPDATE approvals SET status = 'abandoned', decided_by = 'resume', resolved_at = {NOW}"
            " WHERE run_id = ? AND step > ? AND status = 'pending'",
            (run_id, after_step),
        )

    async def expire_approvals(self, run_id: int, reason: str) -> None:
        """Close a run's unanswered requests when it ends: no one can answer them any more."""
        await self._exec(
            f"UPDATE approvals SET status = 'expired', decided_by = 'run ended', reason = ?,"
            f" resolved_at = {NOW} WHERE run_id = ? AND status = 'pending'",
            (reason, run_id),
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
        if pending_only:
            sql += " AND a.status = 'pending'"
        return await self._approval_rows(sql + " ORDER BY a.id", params)

    async def _approval_rows(self, sql: str, params: Sequence[Any]) -> list[ApprovalRow]:
        rows = await self._rows(sql, params)
        return [
            ApprovalRow(
                **{
                    **row,
                    "act": Act(row["act"]),
                    "remembered": tuple(json.loads(row["remembered"] or "[]")),
                }
            )
            for row in rows
        ]

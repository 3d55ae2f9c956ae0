"""One stored run's trace, read from the store and put in words for the trace view's tables.

No Textual here: `History.trace` reads, the `*_rows` functions word, and the screen only lays out.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from ioh_tui.store import ApprovalRow, PolicyEventRow, ProviderCallRow, ToolCallRow
from ioh_tui.tui.describe import money, one_line, tokens, tool_line
from ioh_tui.tui.history import Trace, started

Row = tuple[str, ...]

GATE_MARKS = {"passed": "● passed", "failed": "✗ failed", "errored": "! errored"}
"""Gate results with a glyph, so colour never carries the meaning alone."""
ANSWERS = {
    "approve": "approved",
    "deny": "denied",
    "pending": "pending",
    "abandoned": "abandoned",
    "expired": "expired (the run ended)",
}
"""A request's stored status, as the decisions table says it."""
DECIDERS = {
    "approver": "approver",
    "resumed": "on resume",
    "attached": "another process",
    "resume": "resume (asked again)",
    "queue": "the queue (answered together)",
    "run ended": "no one (the run ended first)",
}
"""Who answered (`approvals.decided_by`), in words."""


def header(trace: Trace) -> list[str]:
    """The header's lines: what, how it ended, with what, and the gate."""
    run = trace.run
    cost = money(trace.cost) if trace.cost is not None else "cost unknown"
    lines = [
        f"run {run.id} · {one_line(run.goal, 200)}",
        f"{trace.state} · {run.steps} steps · {tokens(run.tokens)} tokens · {cost}",
    ]
    parent = f" · sub-agent {run.agent_label} of run {run.parent_run_id}" if run.depth else ""
    lines.append(
        f"{run.model or 'unknown model'} via {run.provider or '?'} · sandbox {run.sandbox or '?'}"
        f" · {run.mode} · started {started(run.started_at)}{parent}"
    )
    if trace.gates:
        lines.append(f"gate: {one_line(trace.gates[-1].criterion, 160)}")
    if run.detail:
        lines.append(one_line(run.detail, 200))
    return lines


def arguments(args: dict[str, Any], width: int = 60) -> str:
    """A call's arguments on one line: `key=value` pairs, each value cut short."""
    parts = []
    for key, value in args.items():
        text = value if isinstance(value, str) else json.dumps(value)
        parts.append(f"{key}={one_line(text, 24)}")
    return one_line(" ".join(parts), width)


def call_result(call: ToolCallRow) -> str:
    """ok, failed or refused, with its glyph."""
    if call.refused:
        return "⊘ refused"
    return "✓ ok" if call.ok else "✗ failed"


def step_rows(trace: Trace) -> list[Row]:
    """One row per tool call (a step without any gets one row): step, call, arguments, result."""
    root = Path(trace.run.root)
    by_step: dict[int, list[ToolCallRow]] = {}
    for call in trace.calls:
        by_step.setdefault(call.step, []).append(call)
    rows: list[Row] = []
    for step in trace.steps:
        n = step.step
        calls = by_step.get(n, [])
        if not calls:
            rows.append((str(n), "reply", "", "", one_line(step.decision, 60)))
        for i, call in enumerate(calls):
            rows.append(
                (
                    str(n) if i == 0 else "",
                    tool_line(call.name, call.arguments, root),
                    arguments(call.arguments, 26),
                    call_result(call),
                    one_line(call.summary, 34),
                )
            )
    return rows


def _answer(row: ApprovalRow) -> str:
    status = str(row.status)
    answer = ANSWERS.get(status, status)
    if row.performed_target or row.performed_content:
        answer += " (rewritten)"
    return answer


def _rule(row: ApprovalRow | PolicyEventRow) -> tuple[str, str]:
    """The rule that asked or refused and its layer; no rule means the act's default tier."""
    if not row.rule:
        return "default tier", "—"
    return one_line(str(row.rule), 30), str(row.layer or "?")


def decision_rows(trace: Trace) -> list[Row]:
    """Every decision in step order: step, act, target, answer, by, rule, layer, reason, kept.

    Asks answered (or left pending) come from the requests; refusals straight from the policy
    are added with `policy` as the decider, since no person was asked, and what a hook decided
    with `hook` (its name in the rule column).
    """
    items: list[tuple[int, int, Row]] = []
    for a in trace.approvals:
        kept = ", ".join(a.remembered)
        who = DECIDERS.get(a.decided_by or "", a.decided_by or "—")
        items.append(
            (
                a.step,
                0,
                (
                    str(a.step),
                    a.act,
                    one_line(a.target, 40),
                    _answer(a),
                    who,
                    *_rule(a),
                    one_line(a.reason or "", 40),
                    kept,
                ),
            )
        )
    for e in trace.refusals:
        items.append(
            (
                e.step,
                1,
                (
                    str(e.step),
                    e.act,
                    one_line(e.target, 40),
                    "refused" if e.kind == "refusal" else "approved",
                    "hook" if (e.source or "").startswith("hook ") else "policy",
                    *_rule(e),
                    "",
                    "",
                ),
            )
        )
    return [row for _, _, row in sorted(items, key=lambda item: (item[0], item[1]))]


def gate_detail(detail: str) -> str:
    """A gate's evidence on one line: its first line and, when longer, its last."""
    lines = [line for line in detail.strip().splitlines() if line.strip()]
    if not lines:
        return ""
    if len(lines) == 1:
        return one_line(lines[0], 100)
    return one_line(f"{lines[0]} … {lines[-1]}", 100)


def gate_rows(trace: Trace) -> list[Row]:
    """Each evaluation of the criterion: step, result, evidence."""
    return [
        (str(g.step), GATE_MARKS.get(g.status, g.status), gate_detail(g.detail))
        for g in trace.gates
    ]


def usage_rows(trace: Trace) -> list[Row]:
    """Per step: input, output and total tokens, cost, model calls (failed attempts named)."""
    attempts: dict[int, list[ProviderCallRow]] = {}
    for call in trace.provider_calls:
        attempts.setdefault(call.step, []).append(call)
    rows: list[Row] = []
    for step in trace.steps:
        n = step.step
        tried = attempts.get(n, [])
        failures = Counter(c.failure for c in tried if c.failure)
        failed = ", ".join(f"{k} ×{v}" if v > 1 else k for k, v in failures.items())
        cost = step.cost_usd
        rows.append(
            (
                str(n),
                f"{step.input_tokens:,}",
                f"{step.output_tokens:,}",
                f"{step.tokens:,}",
                money(cost) if cost is not None else "unknown",
                f"{len(tried)}" + (f" ({failed})" if failed else ""),
            )
        )
    total = trace.cost
    rows.append(
        (
            "all",
            f"{sum(s.input_tokens for s in trace.steps):,}",
            f"{sum(s.output_tokens for s in trace.steps):,}",
            f"{trace.run.tokens:,}",
            money(total) if total is not None else "unknown",
            str(len(trace.provider_calls)),
        )
    )
    return rows


def child_rows(trace: Trace) -> list[Row]:
    """The run's direct sub-agents: id, label, goal, outcome, steps, tokens."""
    return [
        (
            str(c.id),
            c.agent_label,
            one_line(c.goal, 50),
            c.outcome or c.status,
            str(c.steps),
            tokens(c.tokens),
        )
        for c in trace.children
    ]

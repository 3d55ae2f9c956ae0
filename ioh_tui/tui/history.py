"""Past runs in plain words: each run's state, the browser's filters, and whether it can resume.

Pure functions with no Textual import, so the rules are unit-tested without running an app.
"""

from __future__ import annotations

from typing import Any, Literal

from ioh_tui.engine.contract import TERMINAL
from ioh_tui.policy import ApprovalRequest, Decision
from ioh_tui.store import ApprovalRow
from ioh_tui.store.db import RunRow
from ioh_tui.tui.totals import Budget

StatusFilter = Literal["all", "paused", "crashed", "running", "failed", "succeeded"]

STATUS_FILTERS: tuple[StatusFilter, ...] = (
    "all",
    "paused",
    "crashed",
    "running",
    "failed",
    "succeeded",
)
"""The browser's quick filters, in the order `f` cycles through them."""

SUCCEEDED = frozenset({"success", "finished"})
"""Outcomes that count as the run having done its job."""
PAUSED = "awaiting_approval"
"""The outcome of a run paused on a deferred decision."""
CRASHED = "crashed"
"""The state of a run left `running` by a driver that died."""


def run_state(run: RunRow, driven: set[int]) -> str:
    """One word for where a run stands: its outcome, `running`, or `crashed`.

    Args:
        run: The run.
        driven: Runs a live driver holds now (`Store.driven_runs`).

    Returns:
        The outcome of an ended or paused run; `running` while a live driver holds it; `crashed`
        when it was left running by a driver that is gone.
    """
    if run.status == "running":
        return "running" if run.id in driven else CRASHED
    return run.outcome or run.status


def in_group(state: str, group: StatusFilter) -> bool:
    """Whether a run in `state` belongs to a quick filter."""
    match group:
        case "all":
            return True
        case "paused":
            return state == PAUSED
        case "crashed" | "running":
            return state == group
        case "succeeded":
            return state in SUCCEEDED
        case "failed":
            return state not in SUCCEEDED and state not in (PAUSED, CRASHED, "running")


def matches(run: RunRow, state: str, text: str) -> bool:
    """Whether the filter text matches a run's id, goal or state (case-insensitive words, all)."""
    haystack = f"{run.id} #{run.id} {run.goal} {state}".casefold()
    return all(word in haystack for word in text.casefold().split())


BUDGET_OF_OUTCOME = {
    "step_cap_reached": "max_steps",
    "time_budget_exceeded": "time_budget_s",
    "cost_budget_exceeded": "token_budget",
}
"""Which of a run's own budgets each budget outcome spent."""


def stopping_budget(run: RunRow, tree_tokens: int | None = None) -> Budget | None:
    """The budget that stopped the run, or None (not a budget stop).

    A tree run whose own tokens were within budget was stopped by its tree's token ceiling: that
    budget is known when `tree_tokens` (the whole tree's) is given.
    """
    name = BUDGET_OF_OUTCOME.get(run.outcome or "")
    if run.status != "completed" or name is None:
        return None
    limit = run.contract.get(name)
    if name == "token_budget" and not (limit and run.tokens > limit):
        ceiling = run.contract.get("containment", {}).get("max_total_tokens")
        if ceiling and tree_tokens is not None and tree_tokens >= ceiling:
            return Budget("max_total_tokens", tree_tokens, ceiling)
        return None
    if not limit:
        return None
    used = {"max_steps": run.steps, "token_budget": run.tokens, "time_budget_s": limit}[name]
    return Budget(name, used, limit)


def resume_refusal(
    run: RunRow,
    state: str,
    decision: Decision | None,
    pending: list[ApprovalRow],
    overrides: dict[str, Any] | None = None,
    tree_tokens: int | None = None,
) -> str | None:
    """Why the run cannot be resumed from the app now, or None when it can.

    Args:
        run: The run.
        state: Its state (`run_state`).
        decision: The answer to give its pending decision, if any.
        pending: Its pending decision requests.
        overrides: Budgets raised for this resume.
        tree_tokens: The whole tree's tokens (a tree run), to tell its ceiling's stop.

    Returns:
        One line for the person, or None.
    """
    if run.parent_run_id is not None:
        return f"Run {run.id} is a sub-agent: resume its root run {run.root_run_id}."
    if state == "running":
        return f"Run {run.id} is being driven right now (here or by another process)."
    if state in TERMINAL:
        return f"Run {run.id} has finished ({state}): there is nothing left to resume."
    if run.status == "completed":
        # A budget stop resumed as is would stop again at once: the budget has to go up first.
        budget = stopping_budget(run, tree_tokens)
        if budget is None:
            return f"Run {run.id} stopped ({state}) short of any budget it could raise."
        if (overrides or {}).get(budget.name, 0) <= budget.limit:
            return f"Run {run.id} stopped at its budget ({budget.describe()}): raise it to resume."
    if decision is not None and (state != PAUSED or not pending):
        return f"Run {run.id} has no pending decision to answer."
    return None


def stored_request(row: ApprovalRow, *, goal: str = "") -> ApprovalRequest:
    """A pending request as stored, shown exactly as it was when it was first asked.

    Args:
        row: An `approvals` row (`Store.approvals`), which carries the run's goal.
        goal: The goal, when the row does not carry it.

    Returns:
        The request the decision modal shows.
    """
    return ApprovalRequest(
        act=row.act,
        target=row.target,
        content=row.content,
        preview=row.preview,
        rule=row.rule,
        layer=row.layer,
        request_id=row.id,
        run_id=row.run_id,
        agent_label=row.agent_label or "root",
        step=row.step,
        goal=row.goal or goal,
        tool=row.tool,
    )


def started(timestamp: str) -> str:
    """A stored timestamp (`2025-01-02T03:04:05.678Z`, UTC) as `2025-01-02 03:04`."""
    return timestamp[:16].replace("T", " ")

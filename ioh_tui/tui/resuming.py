"""Resuming a stored run from the app: check it can be resumed, then build its plan.

The provider of a stored run is built by a `Resumer` the app is given: the command line builds it
from the run's stored driver options and the environment's keys; tests give a scripted model.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ioh_tui.core.errors import IohError, ResumeError
from ioh_tui.policy import Decision
from ioh_tui.store import Store
from ioh_tui.tui.bridge import PartsSource, RunPlan
from ioh_tui.tui.history import resume_refusal, run_state, stopping_budget
from ioh_tui.tui.totals import Budget

Resumer = Callable[[dict[str, Any]], PartsSource]
"""Builds the parts that continue a stored run, from the run's stored contract (a dict)."""


class ResumeRefused(Exception):
    """The run cannot be resumed from the app; the message is one line for the person."""


class BudgetSpent(ResumeRefused):
    """The run stopped at one of its budgets: it resumes once that budget is raised."""

    def __init__(self, message: str, budget: Budget) -> None:
        super().__init__(message)
        self.budget = budget


async def resume_plan(
    store_path: Path,
    run_id: int,
    decision: Decision | None,
    resumer: Resumer,
    overrides: dict[str, Any] | None = None,
) -> RunPlan:
    """The plan that resumes `run_id`, after checking it can be resumed.

    Args:
        store_path: The store.
        run_id: The run to resume.
        decision: The answer to its pending decision, if one is given.
        resumer: Builds the run's parts from its stored contract.
        overrides: Budgets raised for this resume (a budget-stopped run needs one).

    Returns:
        A `resume` plan for the run worker.

    Raises:
        BudgetSpent: The run stopped at a budget that `overrides` does not raise.
        ResumeRefused: The run cannot be resumed (finished, running, no such run, no provider).
    """
    if not await asyncio.to_thread(store_path.exists):
        raise ResumeRefused(f"There is no store at {store_path}.")
    try:
        async with Store.open(store_path) as store:
            run = await store.run(run_id)
            driven = await store.driven_runs()
            pending = await store.approvals(run_id, pending_only=True)
            tree_tokens = await store.tree_tokens(run_id) if "containment" in run.contract else None
    except (ResumeError, sqlite3.Error) as exc:
        raise ResumeRefused(f"Cannot resume run {run_id}: {exc}") from None
    state = run_state(run, driven)
    refusal = resume_refusal(run, state, decision, pending, overrides, tree_tokens)
    if refusal is not None:
        budget = stopping_budget(run, tree_tokens)
        if budget is not None and run.status == "completed":
            raise BudgetSpent(refusal, budget)
        raise ResumeRefused(refusal)
    try:
        parts = resumer(run.contract)
    except (IohError, ValueError) as exc:
        # Provider set-up errors name variables and options, never a key's value.
        raise ResumeRefused(f"Cannot resume run {run_id}: {exc}") from None
    return RunPlan(store_path, "resume", parts, run_id, decision, overrides)

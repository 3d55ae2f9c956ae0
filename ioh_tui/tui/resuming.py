"""Resuming a stored run from the app: check it can be resumed, then build the run.

The provider of a stored run is built by a `Resumer` the app is given: the command line builds it
from the run's stored driver options and the environment's keys; tests give a scripted model.
"""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

from ioh_tui.core.errors import IohError, ResumeError
from ioh_tui.core.outcomes import run_state
from ioh_tui.engine import Resume
from ioh_tui.store import Store
from ioh_tui.tui.app_run import AppRun, Resumer
from ioh_tui.tui.history import resume_refusal, stopping_budget
from ioh_tui.tui.totals import Budget


class ResumeRefused(Exception):
    """The run cannot be resumed from the app; the message is one line for the person."""


class BudgetSpent(ResumeRefused):
    """The run stopped at one of its budgets: it resumes once that budget is raised."""

    def __init__(self, message: str, budget: Budget) -> None:
        super().__init__(message)
        self.budget = budget


async def resumed_run(store_path: Path, request: Resume, resumer: Resumer) -> AppRun:
    """The run that resumes `request.run_id`, after checking it can be resumed.

    Args:
        store_path: The store.
        request: The run, the answer to its pending decision if one is given, and the budgets
            raised for this resume (a budget-stopped run needs one).
        resumer: Builds the run from the request and the run's stored contract.

    Returns:
        The run for the app's run worker.

    Raises:
        BudgetSpent: The run stopped at a budget that `overrides` does not raise.
        ResumeRefused: The run cannot be resumed (finished, running, no such run, no provider).
    """
    run_id, decision, overrides = request.run_id, request.decision, dict(request.overrides)
    if not await asyncio.to_thread(store_path.exists):
        raise ResumeRefused(f"There is no store at {store_path}.")
    try:
        async with Store.open(store_path) as store:
            run = await store.run(run_id)
            driven = await store.driven_runs()
            pending = await store.approvals(run_id, pending_only=True)
            tree_tokens = None
            if "containment" in run.contract:
                tree_tokens = await store.tree_tokens(run_id)
                # A tree paused on a sub-agent's decision: resuming the root answers it.
                below = [await store.approval(i) for i in await store.pending_below(run_id)]
                pending += [a for a in below if a is not None]
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
        return resumer(request, run.contract)
    except (IohError, ValueError) as exc:
        # Provider set-up errors name variables and options, never a key's value.
        raise ResumeRefused(f"Cannot resume run {run_id}: {exc}") from None

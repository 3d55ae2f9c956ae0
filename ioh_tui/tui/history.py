"""Past runs: the one read model of the store for every screen, and the rules in plain words.

`History` is what the start screen, the run browser, the decision queue and the trace view read
(and the queue answers) through: each call opens the store once and closes it. The rest are pure
functions: each run's state, the browser's filters, and whether a run can resume. No Textual
here, so the rules are unit-tested without running an app.

Every row `History` returns is drawable (`core/shown.py`): the model wrote much of a stored run
(goals of sub-agents, arguments, summaries, details), so its strings come out with keys masked
and control characters visible. A run's contract is kept exact, since resuming reads it.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ioh_tui.core.errors import IohError
from ioh_tui.core.outcomes import CRASHED, run_state
from ioh_tui.core.shown import drawable

if TYPE_CHECKING:
    # The store and the engine are imported when the store is first read: the app makes its
    # `History` before its first frame, which must not wait for them.
    from ioh_tui.policy import ApprovalRequest, Decision
    from ioh_tui.store import (
        ApprovalRow,
        GateAttemptRow,
        PolicyEventRow,
        ProviderCallRow,
        RunRow,
        StepRow,
        Store,
        ToolCallRow,
    )
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
    from ioh_tui.tui.totals import Budget

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
    from ioh_tui.engine.contract import TERMINAL

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


def started(timestamp: str) -> str:
    """A stored timestamp (`2025-01-02T03:04:05.678Z`, UTC) as `2025-01-02 03:04`."""
    return timestamp[:16].replace("T", " ")


# -- the read model ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Trace:
    """Everything the trace view shows of one run."""

    run: RunRow
    state: str
    """Where it stands (`history.run_state`)."""
    steps: list[StepRow]
    calls: list[ToolCallRow]
    approvals: list[ApprovalRow]
    refusals: list[PolicyEventRow]
    """Acts the policy or a hook refused outright, and asks a hook answered (no person asked)."""
    gates: list[GateAttemptRow]
    provider_calls: list[ProviderCallRow]
    children: list[RunRow]
    cost: float | None
    """Dollars, when the provider reported any."""


async def _trace(store: Store, run_id: int) -> Trace:
    run = await store.run(run_id)
    steps = await store.steps(run_id)
    costs = [s.cost_usd for s in steps if s.cost_usd is not None]
    return Trace(
        run=run,
        state=run_state(run, await store.driven_runs()),
        steps=steps,
        calls=await store.tool_calls(run_id),
        approvals=await store.approvals(run_id),
        refusals=[
            e
            for e in await store.policy_events(run_id)
            if e.kind == "refusal" or (e.source or "").startswith("hook ")
        ],
        gates=await store.gate_attempts(run_id),
        provider_calls=await store.provider_calls(run_id),
        children=await store.children(run_id),
        cost=sum(costs) if costs else None,
    )


@dataclass(frozen=True, slots=True)
class Front:
    """What the start screen lists."""

    pending: list[ApprovalRow]
    """Pending (deferred) decisions across runs."""
    recent: list[RunRow]
    """Recent root runs, newest first."""


@dataclass(frozen=True, slots=True)
class Browse:
    """What the run browser lists."""

    runs: list[RunRow]
    """Root runs, newest first."""
    states: dict[int, str]
    """Each run's state (`run_state`)."""
    costs: dict[int, float]
    """Each run's cost, when known."""
    pending: dict[int, list[ApprovalRow]]
    """Pending decision requests per run."""


@dataclass(frozen=True, slots=True)
class StoredAsk:
    """A pending decision in the store, with where its run stands."""

    row: ApprovalRow
    """Its `approvals` row."""
    run: RunRow
    """The run that asked it."""
    root_driven: bool
    """Whether a live driver holds the run's root now."""

    @property
    def root(self) -> int:
        """The root run of the run that asked."""
        return self.run.root_run_id or self.run.id


def _drawn_run(run: RunRow) -> RunRow:
    """A run row safe to draw, its contract exact (a resume builds the run from it)."""
    return dataclasses.replace(
        drawable(dataclasses.replace(run, contract={})), contract=run.contract
    )


def _drawn_runs(runs: list[RunRow]) -> list[RunRow]:
    return [_drawn_run(r) for r in runs]


def _open(path: Path) -> AbstractAsyncContextManager[Store]:
    """The store at `path`, opened (imported on the first read)."""
    from ioh_tui.store import Store

    return Store.open(path)


class NoStore(IohError):
    """There is no store at the path (nothing was ever run with it)."""


class History:
    """The store as the screens read it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        """The SQLite store."""

    async def _exists(self) -> bool:
        return await asyncio.to_thread(self.path.exists)

    async def front(self, limit: int) -> Front:
        """Pending decisions and the `limit` most recent root runs (none without a store)."""
        if not await self._exists():
            return Front([], [])
        async with _open(self.path) as store:
            pending = await store.approvals(pending_only=True)
            recent = await store.runs(limit=limit, roots_only=True)
        return Front(drawable(pending), _drawn_runs(recent))

    async def browse(self, limit: int) -> Browse:
        """The `limit` most recent root runs with their states, costs and pending decisions."""
        if not await self._exists():
            return Browse([], {}, {}, {})
        async with _open(self.path) as store:
            runs = await store.runs(limit=limit, roots_only=True)
            driven = await store.driven_runs()
            costs = await store.run_costs()
            pending: dict[int, list[ApprovalRow]] = {}
            for row in await store.approvals(pending_only=True):
                pending.setdefault(row.run_id, []).append(drawable(row))
        states = {run.id: run_state(run, driven) for run in runs}
        return Browse(_drawn_runs(runs), states, costs, pending)

    async def asks(self) -> list[StoredAsk]:
        """Every pending decision in the store, oldest first, with its run."""
        if not await self._exists():
            return []
        asks: list[StoredAsk] = []
        async with _open(self.path) as store:
            driven = await store.driven_runs()
            runs: dict[int, RunRow] = {}  # a tree's children often ask together
            for row in await store.approvals(pending_only=True):
                if row.run_id not in runs:
                    runs[row.run_id] = await store.run(row.run_id)
                run = runs[row.run_id]
                driven_now = (run.root_run_id or run.id) in driven
                asks.append(StoredAsk(drawable(row), _drawn_run(run), driven_now))
        return asks

    async def trace(self, run_id: int) -> Trace:
        """One run's trace.

        Raises:
            NoStore: There is no store.
            ResumeError: There is no such run.
        """
        if not await self._exists():
            raise NoStore(f"no store at {self.path}")
        async with _open(self.path) as store:
            trace = await _trace(store, run_id)
        bare = dataclasses.replace(trace, run=dataclasses.replace(trace.run, contract={}))
        return dataclasses.replace(
            drawable(dataclasses.replace(bare, children=[])),
            run=_drawn_run(trace.run),
            children=_drawn_runs(trace.children),
        )

    async def answer(
        self, requests: Sequence[ApprovalRequest], decision: Decision, *, by: str
    ) -> int:
        """Answer stored requests with one decision, sealed (the first answer wins).

        A rewrite is written as performed and a remember with its rules: the run that takes the
        answer re-checks the rewrite against its policy and keeps the rules (`keep` saves them
        beyond the run).

        Returns:
            How many of the requests this answer took.
        """
        landed = 0
        async with _open(self.path) as store:
            for request in requests:
                answer = decision.to_row(request)
                landed += await store.answer_approval(request.request_id, answer, by=by)
        return landed

    async def keep(self, requests: Sequence[ApprovalRequest], decision: Decision) -> str:
        """Save the rules `decision` remembers beyond the runs of `requests`, where it says.

        A run that takes a stored answer keeps its rules for itself, but the sealed answer has no
        scope: a project rule goes to each run's project here, a user or file rule to its one file.

        Returns:
            What went wrong (empty when nothing did, or nothing was to be saved).
        """
        if not decision.remember or decision.scope == "run":
            return ""
        from ioh_tui.engine.decide import save_remembered

        async with _open(self.path) as store:
            roots = [(await store.run(r.run_id)).root for r in requests]
        unique = list(dict.fromkeys(roots))
        if decision.scope != "project":
            unique = unique[:1]
        said = [await asyncio.to_thread(save_remembered, decision, Path(r)) for r in unique]
        return " ".join(text for text in said if text)

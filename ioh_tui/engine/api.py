"""The entry: `start(request, parts)` builds a drive, takes the run's lease, and drives it.

`run`, `run_tree`, `resume` and `resume_with_decision` are the Python names the interface keeps;
each is a thin wrapper over `start`. A new run is recorded and driven from step 1; a stored run is
read back (`session.py`) and driven from its next step, after settling a pending decision
(`loop.resume_step`) or the checks a crash cut (`loop.drive(recheck=True)`).

Just over 400 lines: the entry and the resume path (lease, stored policy stacking, a paused
tree) read best together; the resume path is the part to move out next.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import asdict, replace
from functools import partial
from typing import Any

from ioh_tui.context import window_for
from ioh_tui.core import events as ev
from ioh_tui.core.control import Stop
from ioh_tui.core.errors import ConfigError, ConflictError, ResumeError
from ioh_tui.engine.budgets import BudgetRaises
from ioh_tui.engine.bus import EventBus, EventLog, Observer
from ioh_tui.engine.cancel import CancelToken
from ioh_tui.engine.contract import TERMINAL, RunResult, TaskContract, check_contract
from ioh_tui.engine.decide import DecisionRules
from ioh_tui.engine.gatework import remove_left
from ioh_tui.engine.loop import drive, finish, resume_step
from ioh_tui.engine.request import NewRun, Parts, Resume, RunRequest
from ioh_tui.engine.servers import mcp_servers
from ioh_tui.engine.session import carried, paused_on, resumed_state, root_deps
from ioh_tui.engine.state import FLAT, Deps, Lease, RunState, Spawner
from ioh_tui.engine.tree import Containment, Tree
from ioh_tui.paths import check_store_placement
from ioh_tui.policy import Approver, Decision, DenyAll, Policy
from ioh_tui.providers.base import Provider
from ioh_tui.sandbox import Sandbox, select
from ioh_tui.store import ApprovalRow, Store

__all__ = [
    "check_contract",
    "resume",
    "resume_with_decision",
    "run",
    "run_tree",
    "start",
]

LEASE_TTL_S = 1800.0
_owner_seq = itertools.count(1)


def _owner() -> str:
    """A lease owner id: `<pid>-<ns>-<seq>` (the pid lets a later process see that we died)."""
    return f"{os.getpid()}-{time.time_ns()}-{next(_owner_seq)}"


async def start(request: RunRequest, parts: Parts) -> RunResult:
    """Run (or resume) `request` with `parts` to its outcome, recorded in the store."""
    match request:
        case Resume():
            return await _resume(request, parts)
        case NewRun():
            return await _new(request, parts)


def _default_sandbox() -> Sandbox:
    """The strongest rung this machine has: the engine's one default, when a caller picked none."""
    return select("auto")


async def _new(request: NewRun, parts: Parts) -> RunResult:
    """Check the contract, record the run (with its containment and driver) and its policy."""
    contract, containment = request.contract, request.containment
    if containment is not None and contract.mode != "workspace":
        raise ConfigError("a sub-agent tree works over a workspace, not a single file")
    check_contract(contract)
    check_store_placement(parts.store.path, contract.root)
    extra: dict[str, Any] = {"driver": dict(request.driver)}
    if request.continues:
        extra["continues"] = list(request.continues)
    if containment is not None:
        extra = {"containment": asdict(containment), **extra}
    policy = parts.policy or Policy.default()
    sandbox = parts.sandbox or _default_sandbox()
    store, provider = parts.store, parts.provider
    run_id = await store.start_run(
        goal=contract.goal,
        mode=contract.mode,
        root=str(contract.root),
        subject=contract.subject,
        contract={**contract.to_dict(), **extra},
        provider=provider.name,
        model=provider.model,
        sandbox=sandbox.backend,
    )
    await store.set_policy(run_id, policy.to_json())
    deps = _deps(run_id, contract, parts, sandbox, containment)
    history = await carried(store, request.continues, contract.goal)
    return await _driven(
        deps, RunState(contract, DecisionRules(policy), history), start=1, resumed_from=None
    )


async def _so_far(p: Deps) -> tuple[float | None, float]:
    return await p.store.run_cost(p.run_id), await p.store.elapsed_s(p.run_id)


def _deps(
    run_id: int,
    contract: TaskContract,
    parts: Parts,
    sandbox: Sandbox,
    containment: Containment | None,
    *,
    agents: int = 0,
    spent: int = 0,
) -> Deps:
    """A root drive's deps; with a containment, the root of a tree (the loop's `drive` in it)."""
    bus = EventBus(parts.observers)
    spawner: Spawner = FLAT
    if containment is not None:
        spawner = Tree(
            containment,
            run_id,
            parts.store,
            bus,
            drive if parts.fleet is None else parts.fleet.driver(drive),
            agents=agents,
            spent=spent,
            raises=parts.raises,
            settle=resume_step,
        )
    return root_deps(
        run_id,
        contract,
        provider=parts.provider,
        store=parts.store,
        sandbox=sandbox,
        approver=parts.approver or DenyAll(),
        bus=bus,
        cancel=parts.cancel or CancelToken(),
        spawner=spawner,
        raises=parts.raises,
        tree=containment is not None,
        mcp=parts.mcp,
        hooks=parts.hooks,
    )


async def _resume(request: Resume, parts: Parts) -> RunResult:
    """Continue a stored run from its last committed step (see `resume`)."""
    run_id, store, decision = request.run_id, parts.store, request.decision
    row = await store.run(run_id)
    if row.parent_run_id is not None:
        raise ResumeError(f"run {run_id} is a sub-agent; resume its root run {row.root_run_id}")
    contract = TaskContract.from_dict(row.contract)
    check_store_placement(store.path, contract.root)
    kept = row.contract
    if request.overrides:
        overrides = dict(request.overrides)
        if (ceiling := overrides.pop("max_total_tokens", None)) is not None:
            kept = {**kept, "containment": _raised_ceiling(run_id, kept, ceiling)}
        contract = replace(contract, **overrides)
        kept = {**kept, **contract.to_dict()}
        await store.update_contract(run_id, kept)
    if row.status == "completed" and row.outcome in TERMINAL:
        # Resuming a finished run changes nothing; observers still hear how it ended.
        EventBus(parts.observers).emit(
            ev.RunFinished(
                run_id=run_id,
                outcome=row.outcome,
                steps=row.steps,
                tokens=row.tokens,
                detail=row.detail,
            )
        )
        return RunResult(row.outcome, run_id, row.steps, row.tokens, row.detail)
    if not contract.root.is_dir():
        # Steps against nothing would only fail one by one (and a gate would run elsewhere).
        raise ResumeError(f"run {run_id}'s workspace {contract.root} no longer exists")
    policy = parts.policy
    stored = await store.policy(run_id)
    base = Policy.from_json(stored) if stored else Policy.default()
    if policy is None:
        policy = base
    else:
        # Stacked, never swapped: a resume may add rules, but the run's own denies (and its
        # stricter defaults) stay.
        policy = base.merge(policy)
        await store.set_policy(run_id, policy.to_json())
    sandbox = parts.sandbox or _default_sandbox()
    provider = parts.provider
    await store.set_run_driver(
        run_id, provider=provider.name, model=provider.model, sandbox=sandbox.backend
    )
    containment = None
    agents = spent = 0
    if "containment" in kept:
        containment = Containment(**kept["containment"])
        agents = len(await store.tree(run_id)) - 1  # sub-agents only
        spent = await store.tree_tokens(run_id)
    deps = _deps(run_id, contract, parts, sandbox, containment, agents=agents, spent=spent)
    state, last = await resumed_state(store, run_id, contract, DecisionRules(policy), row.tokens)
    state.history[:0] = await carried(store, kept.get("continues") or (), row.goal)
    requests = await store.approvals(run_id)
    pending = [a for a in requests if a.status == "pending"]
    if row.status == "paused" and (resumed := await _paused(deps, state, last, requests, decision)):
        return resumed
    if row.status == "running":
        # Either a live driver holds the run (this raises `ConflictError`), or it died.
        probe = _owner()
        await store.acquire_lease(run_id, probe, LEASE_TTL_S)
        await store.release_lease(run_id, probe)
        # A driver that died while asking leaves its request behind; the step will ask again.
        await store.abandon_approvals(run_id, after_step=last)
        if decision is not None and pending:
            raise ResumeError(
                f"run {run_id} stopped while it was asking; resume it without --decide to be "
                "asked again"
            )
    if decision is not None:
        raise ResumeError(f"run {run_id} has no pending decision to answer")
    # A crash may have cut the checks after the last committed step (the gate among them).
    recheck = row.status == "running" and last > 0
    return await _driven(deps, state, start=last + 1, resumed_from=last, recheck=recheck)


async def _paused(
    deps: Deps, state: RunState, last: int, requests: list[ApprovalRow], decision: Decision | None
) -> RunResult | None:
    """Resume a paused run: its own decision settled, or a sub-agent's (None: neither waits).

    A tree's answer goes to the request its pause named (the oldest a sub-agent waits on); its
    paused detached children start again in the background once the lease is held.
    """
    run_id, store = deps.run_id, deps.store
    pending = [a for a in requests if a.status == "pending"]
    paused = paused_on(run_id, requests, pending, decision, state.history)
    revive = None
    if isinstance(deps.spawner, Tree):
        tree = deps.spawner
        if paused is None and decision is not None:
            below = await store.pending_below(run_id)
            if not below:
                raise ResumeError(f"run {run_id} has no pending decision to answer")
            tree.answer = (below[0], decision)
        revive = partial(tree.revive, deps, state)
        if paused is None and await store.paused_below(run_id):
            # Paused on a sub-agent's decision: re-check the last step, replay the one it cut.
            return await _driven(
                deps, state, start=last + 1, resumed_from=last, recheck=last > 0, revive=revive
            )
    if paused is None:
        return None
    held, answer = paused
    return await _driven(
        deps,
        state,
        start=last + 1,
        resumed_from=last,
        pending=held,
        decision=answer,
        revive=revive,
    )


def _raised_ceiling(run_id: int, contract: dict[str, Any], ceiling: int) -> dict[str, Any]:
    """A tree's stored containment with a higher token ceiling (a resume's override)."""
    containment = contract.get("containment")
    if containment is None:
        raise ResumeError(f"run {run_id} is not a tree: it has no token ceiling to raise")
    current = containment.get("max_total_tokens")
    if current is not None and ceiling <= current:
        raise ResumeError(f"the tree's token ceiling is {current:,}: a new one must be higher")
    return {**containment, "max_total_tokens": int(ceiling)}


async def _driven(
    p: Deps,
    s: RunState,
    *,
    start: int,
    resumed_from: int | None,
    pending: ApprovalRow | None = None,
    decision: Decision | None = None,
    recheck: bool = False,
    revive: Callable[[], Awaitable[None]] | None = None,
) -> RunResult:
    """Take the lease, log events, announce the start, drive, and always clean up.

    `revive`: a resumed tree's paused detached children start again once the lease is held.
    """
    log = EventLog(p.store)
    p.bus.subscribe(log)
    owner = _owner()
    s.lease = Lease(owner, await p.store.acquire_lease(p.run_id, owner, LEASE_TTL_S))
    try:
        # The lease is ours, so no live drive uses a gate directory the run left behind.
        await remove_left(p.store, p.run_id, p.sandbox.backend)
        # A resumed run's earlier drives: what they cost, and how long ago the run started.
        cost, elapsed = (None, 0.0) if resumed_from is None else await _so_far(p)
        p.bus.emit(
            ev.RunStarted(
                **p.who.fields(),
                goal=s.contract.goal,
                mode=s.contract.mode,
                budgets=s.contract.budgets(),
                provider=p.provider.name,
                model=p.provider.model,
                sandbox=p.sandbox.backend,
                resumed_from_step=resumed_from,
                tokens=s.tokens,
                cost_usd=cost,
                elapsed_s=elapsed,
                context_window=window_for(p.provider.model, s.contract.context_window),
                instructions=p.instructions.name if p.instructions else None,
                skills=[s.name for s in p.skills.skills],
                warnings=list(p.skills.warnings),
            )
        )
        # The servers start after the lease (a second driver never starts them) and stop with
        # the drive, whichever way it ends.
        async with mcp_servers(p, s, start):
            if revive is not None:
                await revive()
            if pending is not None:
                return await resume_step(p, s, pending, decision)
            return await drive(p, s, start, recheck=recheck)
    except asyncio.CancelledError:
        await finish(
            p,
            s,
            Stop("cancelled", await p.store.last_step(p.run_id), "the run's task was cancelled"),
        )
        raise
    except ConflictError:
        raise
    except Exception as exc:
        await finish(
            p, s, Stop("failed", await p.store.last_step(p.run_id), f"internal error: {exc!r}")
        )
        raise
    finally:
        # Every exit path of the drive ends here, so this is where the gate work dir goes.
        await p.gate_work.close(p.store, p.run_id, p.sandbox.backend)
        await p.store.release_lease(p.run_id, owner)
        await log.drain()


# The Python names of the interface: thin wrappers over `start`.


async def run(
    contract: TaskContract,
    provider: Provider,
    *,
    store: Store,
    policy: Policy | None = None,
    approver: Approver | None = None,
    sandbox: Sandbox | None = None,
    observers: Iterable[Observer] = (),
    cancel: CancelToken | None = None,
    raises: BudgetRaises | None = None,
    driver: dict[str, str] | None = None,
) -> RunResult:
    """Run a contract to its outcome (approver default `DenyAll`, policy `Policy.default()`).

    `driver` keeps the provider options (never a key) with the run, so a resume needs none.
    """
    parts = Parts(provider, store, policy, approver, sandbox, tuple(observers), cancel, raises)
    return await start(NewRun(contract, driver=driver or {}), parts)


async def run_tree(
    contract: TaskContract,
    provider: Provider,
    *,
    store: Store,
    containment: Containment,
    policy: Policy | None = None,
    approver: Approver | None = None,
    sandbox: Sandbox | None = None,
    observers: Iterable[Observer] = (),
    cancel: CancelToken | None = None,
    raises: BudgetRaises | None = None,
    driver: dict[str, str] | None = None,
) -> RunResult:
    """Run a contract whose agent may spawn sub-agents, all under one `Containment`.

    The tree's run ends when every agent has ended; its outcome is the root's.
    """
    parts = Parts(provider, store, policy, approver, sandbox, tuple(observers), cancel, raises)
    return await start(NewRun(contract, containment, driver=driver or {}), parts)


async def resume(
    run_id: int,
    provider: Provider,
    *,
    store: Store,
    policy: Policy | None = None,
    approver: Approver | None = None,
    sandbox: Sandbox | None = None,
    observers: Iterable[Observer] = (),
    cancel: CancelToken | None = None,
    raises: BudgetRaises | None = None,
    decision: Decision | None = None,
    overrides: dict[str, Any] | None = None,
) -> RunResult:
    """Continue a run from its last committed step.

    A finished run is reported unchanged. A paused run first settles its pending decision
    (`decision`, or the approver's answer), performing or refusing exactly the deferred act.
    `overrides` may raise budgets (`max_steps`, `time_budget_s`, `token_budget`, `max_retries`,
    and a tree's token ceiling, `max_total_tokens`).
    """
    parts = Parts(provider, store, policy, approver, sandbox, tuple(observers), cancel, raises)
    return await start(Resume(run_id, decision, overrides or {}), parts)


async def resume_with_decision(
    run_id: int, decision: Decision, provider: Provider, *, store: Store, **kwargs: Any
) -> RunResult:
    """Answer a paused run's pending decision, then continue it."""
    return await resume(run_id, provider, store=store, decision=decision, **kwargs)

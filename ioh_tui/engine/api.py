"""Entry points: `run` a contract; `resume` a run from its last committed step.

Both build one `Drive` and hand it to the one loop in `loop.py`. (Slightly over 400 lines: the
resume path's recovery cases read best next to the start path they mirror.)
"""

from __future__ import annotations

import asyncio
import itertools
import os
import time
from collections.abc import Iterable
from dataclasses import asdict, replace
from typing import Any

from ioh_tui.core import events as ev
from ioh_tui.core.errors import ConfigError, ConflictError, ResumeError
from ioh_tui.engine.bus import EventBus, EventLog, Observer
from ioh_tui.engine.cancel import CancelToken, RunCancelled
from ioh_tui.engine.contract import TERMINAL, RunResult, TaskContract
from ioh_tui.engine.gate import GateState, Preset
from ioh_tui.engine.ids import Who
from ioh_tui.engine.loop import (
    Stop,
    after_step,
    drive,
    execute_tools,
    finish,
    recheck_then_drive,
)
from ioh_tui.engine.raises import BudgetRaises
from ioh_tui.engine.state import Drive
from ioh_tui.engine.tree import Containment, Tree
from ioh_tui.policy import ApprovalRequest, Approver, Decision, DenyAll, Policy
from ioh_tui.providers.base import Provider
from ioh_tui.sandbox.base import Sandbox
from ioh_tui.store import ApprovalRow, Store
from ioh_tui.toolchain import detect
from ioh_tui.tools import SINGLE_FILE_TOOLS, WORKSPACE_TOOLS, ToolSet, Workspace
from ioh_tui.tools.registry import TREE_TOOLS

LEASE_TTL_S = 1800.0
_owner_seq = itertools.count(1)


def _owner() -> str:
    """A lease owner id: `<pid>-<ns>-<seq>` (the pid lets a later process see that we died)."""
    return f"{os.getpid()}-{time.time_ns()}-{next(_owner_seq)}"


def check_contract(contract: TaskContract) -> None:
    """Refuse a contract that cannot run, before anything is recorded."""
    if not contract.goal.strip():
        raise ConfigError("the goal is empty")
    if not contract.root.is_dir():
        raise ConfigError(f"workspace {contract.root} does not exist or is not a directory")
    single = contract.verification.single_file
    if contract.mode == "workspace" and single is True:
        raise ConfigError(
            f"{type(contract.verification).__name__} checks one file: use single-file mode (--file)"
        )
    if contract.mode == "single_file" and single is False:
        raise ConfigError(f"{type(contract.verification).__name__} is a workspace criterion")


def _default_sandbox() -> Sandbox:
    from ioh_tui.sandbox import select

    return select("auto")


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
    d = await _new_run(
        contract,
        provider,
        store,
        policy,
        approver,
        sandbox,
        observers,
        cancel,
        {"driver": driver or {}},
    )
    d.raises = raises
    return await _driven(d, start=1, resumed_from=None)


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
    if contract.mode != "workspace":
        raise ConfigError("a sub-agent tree works over a workspace, not a single file")
    extra = {"containment": asdict(containment), "driver": driver or {}}
    d = await _new_run(
        contract, provider, store, policy, approver, sandbox, observers, cancel, extra
    )
    d.raises = raises
    _make_tree(d, containment)
    return await _driven(d, start=1, resumed_from=None)


async def _new_run(
    contract: TaskContract,
    provider: Provider,
    store: Store,
    policy: Policy | None,
    approver: Approver | None,
    sandbox: Sandbox | None,
    observers: Iterable[Observer],
    cancel: CancelToken | None,
    extra: dict[str, Any],
) -> Drive:
    """Check the contract, record the run (the contract with `extra`) and its policy."""
    check_contract(contract)
    policy = policy or Policy.default()
    sandbox = sandbox or _default_sandbox()
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
    return _drive(run_id, contract, provider, store, policy, approver, sandbox, observers, cancel)


def _make_tree(d: Drive, containment: Containment, *, agents: int = 0, spent: int = 0) -> None:
    d.tree = Tree(containment, d.run_id, agents=agents, spent=spent, raises=d.raises)
    d.tools = ToolSet(TREE_TOOLS)
    d.who = Who(d.run_id, d.run_id, None)  # a tree's events name their agent, the root included


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
    row = await store.run(run_id)
    if row.parent_run_id is not None:
        raise ResumeError(f"run {run_id} is a sub-agent; resume its root run {row.root_run_id}")
    contract = TaskContract.from_dict(row.contract)
    kept = row.contract
    if overrides:
        overrides = dict(overrides)
        if (ceiling := overrides.pop("max_total_tokens", None)) is not None:
            kept = {**kept, "containment": _raised_ceiling(run_id, kept, ceiling)}
        contract = replace(contract, **overrides)
        kept = {**kept, **contract.to_dict()}
        await store.update_contract(run_id, kept)
    if row.status == "completed" and row.outcome in TERMINAL:
        # Resuming a finished run changes nothing; observers still hear how it ended.
        EventBus(observers).emit(
            ev.RunFinished(
                run_id=run_id,
                outcome=row.outcome,
                steps=row.steps,
                tokens=row.tokens,
                detail=row.detail,
            )
        )
        return RunResult(row.outcome, run_id, row.steps, row.tokens, row.detail)
    stored = await store.policy(run_id)
    base = Policy.from_json(stored) if stored else Policy.default()
    if policy is None:
        policy = base
    else:
        # Stacked, never swapped: a resume may add rules, but the run's own denies (and its
        # stricter defaults) stay.
        policy = base.merge(policy)
        await store.set_policy(run_id, policy.to_json())
    sandbox = sandbox or _default_sandbox()
    await store.set_run_driver(
        run_id, provider=provider.name, model=provider.model, sandbox=sandbox.backend
    )
    d = _drive(run_id, contract, provider, store, policy, approver, sandbox, observers, cancel)
    d.raises = raises
    if "containment" in kept:
        tree_rows = await store.tree(run_id)
        _make_tree(
            d,
            Containment(**kept["containment"]),
            agents=len(tree_rows) - 1,  # sub-agents only
            spent=await store.tree_tokens(run_id),
        )
    d.history = [m.message for m in await store.messages(run_id)]
    d.tokens = row.tokens
    last = await store.last_step(run_id)
    for attempt in await store.attempts(run_id, step=last + 1):
        d.journal[(last + 1, attempt.seq)] = attempt  # the latest attempt per call wins
    requests = await store.approvals(run_id)
    pending = [a for a in requests if a.status == "pending"]
    if row.status == "paused" and (paused := _paused_on(run_id, requests, pending, decision)):
        request, answer = paused
        return await _driven(d, start=last + 1, resumed_from=last, pending=request, decision=answer)
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
    return await _driven(d, start=last + 1, resumed_from=last, recheck=recheck)


def _raised_ceiling(run_id: int, contract: dict[str, Any], ceiling: int) -> dict[str, Any]:
    """A tree's stored containment with a higher token ceiling (a resume's override)."""
    containment = contract.get("containment")
    if containment is None:
        raise ResumeError(f"run {run_id} is not a tree: it has no token ceiling to raise")
    current = containment.get("max_total_tokens")
    if current is not None and ceiling <= current:
        raise ResumeError(f"the tree's token ceiling is {current:,}: a new one must be higher")
    return {**containment, "max_total_tokens": int(ceiling)}


def _paused_on(
    run_id: int,
    requests: list[ApprovalRow],
    pending: list[ApprovalRow],
    decision: Decision | None,
) -> tuple[ApprovalRow, Decision | None] | None:
    """The request a paused run stopped on, and the answer to settle it with.

    Still pending: the answer given (None: the approver is asked). Answered in the store while the
    run was paused (the decision queue answers several at once): that answer, without asking
    again. A run pauses at its first deferred request and asks nothing after it, so that request
    is the run's latest.
    """
    if pending:
        return pending[-1], decision
    latest = requests[-1] if requests else None
    if latest is None or latest.status not in ("approve", "deny"):
        return None
    if decision is not None:
        raise ResumeError(f"run {run_id}'s decision was already answered; resume it as is")
    return latest, Decision.from_row(latest.answer)


async def resume_with_decision(
    run_id: int, decision: Decision, provider: Provider, *, store: Store, **kwargs: Any
) -> RunResult:
    """Answer a paused run's pending decision, then continue it."""
    return await resume(run_id, provider, store=store, decision=decision, **kwargs)


def _drive(
    run_id: int,
    contract: TaskContract,
    provider: Provider,
    store: Store,
    policy: Policy,
    approver: Approver | None,
    sandbox: Sandbox,
    observers: Iterable[Observer],
    cancel: CancelToken | None,
) -> Drive:
    bus = EventBus(observers)
    tools = SINGLE_FILE_TOOLS if contract.mode == "single_file" else WORKSPACE_TOOLS
    # Detected once per drive; single-file mode has no exec and no other files, so no project.
    found = detect(contract.root) if contract.mode == "workspace" else None
    return Drive(
        run_id=run_id,
        contract=contract,
        provider=provider,
        store=store,
        sandbox=sandbox,
        approver=approver or DenyAll(),
        bus=bus,
        cancel=cancel or CancelToken(),
        gate=GateState(policy),
        tools=ToolSet(tools),
        workspace=Workspace.at(contract.root),
        who=Who(run_id),
        toolchain=found,
        project=found.describe() if found is not None else None,
    )


async def _driven(
    d: Drive,
    *,
    start: int,
    resumed_from: int | None,
    pending: ApprovalRow | None = None,
    decision: Decision | None = None,
    recheck: bool = False,
) -> RunResult:
    """Take the lease, log events, announce the start, drive, and always clean up."""
    log = EventLog(d.store)
    d.bus.subscribe(log)
    owner = _owner()
    d.lease_generation = await d.store.acquire_lease(d.run_id, owner, LEASE_TTL_S)
    d.lease_owner = owner
    try:
        d.bus.emit(
            ev.RunStarted(
                run_id=d.who.run_id,
                agent_id=d.who.agent_id,
                parent_id=d.who.parent_id,
                goal=d.contract.goal,
                mode=d.contract.mode,
                budgets=d.contract.budgets(),
                provider=d.provider.name,
                model=d.provider.model,
                sandbox=d.sandbox.backend,
                resumed_from_step=resumed_from,
            )
        )
        if pending is not None:
            return await _settle_pending(d, pending, decision)
        if recheck:
            return await recheck_then_drive(d, start)
        return await drive(d, start)
    except asyncio.CancelledError:
        await finish(
            d, Stop("cancelled", await d.store.last_step(d.run_id), "the run's task was cancelled")
        )
        raise
    except ConflictError:
        raise
    except Exception as exc:
        await finish(
            d, Stop("failed", await d.store.last_step(d.run_id), f"internal error: {exc!r}")
        )
        raise
    finally:
        # Every exit path of the drive ends here, so this is where the gate work dir goes.
        await d.gate_work.close(d)
        await d.store.release_lease(d.run_id, owner)
        await log.drain()


async def _settle_pending(d: Drive, pending: ApprovalRow, decision: Decision | None) -> RunResult:
    """Perform or refuse exactly the deferred act, finish its step, then continue the run."""
    n = pending.step
    assistant = next((m for m in reversed(d.history) if m.role == "assistant"), None)
    calls = assistant.tool_calls if assistant is not None else ()
    position = next((i for i, c in enumerate(calls) if c.id == pending.call_id), None)
    if position is None:
        raise ResumeError(f"request {pending.id} does not match the paused step's tool calls")
    if decision is None:
        try:
            decision = await d.cancel.guard(d.approver.decide(_request(d, pending)))
        except RunCancelled as exc:
            return await finish(d, Stop("cancelled", n, str(exc)))
    if decision.kind == "defer":
        return await finish(
            d, Stop("awaiting_approval", n, "the decision is still deferred", pending.id)
        )
    preset = Preset(pending.act, pending.target, decision, pending.id, by="resumed")
    try:
        results, rows, deferred, changed = await execute_tools(
            d, n, calls, first=position, preset=preset
        )
        await d.store.append_to_step(d.run_id, n, results, rows)
        d.history.extend(results)
        if deferred is not None:
            raise Stop("awaiting_approval", n, "a decision was deferred", request_id=deferred)
        await after_step(d, n, called=True, changed=changed)
    except Stop as stop:
        return await finish(d, stop)
    except RunCancelled as exc:
        return await finish(d, Stop("cancelled", n, str(exc)))
    return await drive(d, n + 1)


def _request(d: Drive, row: ApprovalRow) -> ApprovalRequest:
    return ApprovalRequest(
        act=row.act,
        target=row.target,
        content=row.content,
        preview=row.preview,
        rule=row.rule,
        layer=row.layer,
        request_id=row.id,
        run_id=d.run_id,
        agent_label=row.agent_label,
        step=row.step,
        goal=d.contract.goal,
        tool=row.tool,
    )

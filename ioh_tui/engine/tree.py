"""Sub-agent trees: a parent spawns contained children under one shared ceiling.

- `max_total_agents`: sub-agents that may ever exist (the root not counted); a spawn past it is
  refused, as a tool result the parent reads and adapts to.
- `max_depth` (the root is 0): a deeper spawn is refused.
- `max_concurrent`: agents working at once per tier (depth); excess spawns queue, never refused.
  A parent keeps its own tier's slot while its children wait for theirs, so no cycle can form.
- `max_total_tokens`: one ledger for the whole tree; a step whose tokens pass it halts every
  agent (`cost_budget_exceeded`); a spawn when nothing is left is refused. A supervisor may raise
  it while the tree runs (`apply_tree_raise`), or when resuming a tree it stopped.
A child runs the same loop over the same workspace and store, with its parent's effective policy
contained (it can only narrow), the same approver (requests name the agent), and its own run row.
Its report returns as the spawn call's result (`wait`), or at one of the parent's later steps.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import Any

from ioh_tui.core import events as ev
from ioh_tui.core.transcript import Message, ToolCall
from ioh_tui.engine.contract import RunResult, TaskContract
from ioh_tui.engine.gate import GateState
from ioh_tui.engine.ids import Who
from ioh_tui.engine.raises import BudgetRaises, apply_tree_raise
from ioh_tui.engine.state import Drive
from ioh_tui.policy import Policy
from ioh_tui.tools import ToolResult
from ioh_tui.verification import NoGate

DEFAULT_CHILD_STEPS = 8


@dataclass(frozen=True, slots=True)
class Containment:
    """The whole tree's limits; no spawned contract can raise them."""

    max_total_agents: int = 16
    """Sub-agents that may ever exist in the tree (the root is not counted)."""
    max_concurrent: int = 4
    """Agents working at once in one tier (depth)."""
    max_depth: int = 1
    """The deepest a sub-agent may be (the root is depth 0)."""
    max_total_tokens: int | None = None
    """One token ceiling for the whole tree."""


@dataclass(slots=True)
class Tree:
    """The shared state of one tree: counts, the token ledger, the per-tier slots."""

    containment: Containment
    root_run_id: int
    agents: int = 0
    """Sub-agents created so far."""
    spent: int = 0
    working: int = 1
    queued: int = 0
    done: int = 0
    halt_reason: str | None = None
    raises: BudgetRaises | None = None
    """The root's raises, where a higher `max_total_tokens` may wait (`apply_tree_raise`)."""
    _tiers: dict[int, asyncio.Semaphore] = field(default_factory=dict)
    _detached: dict[int, list[asyncio.Future[ToolResult]]] = field(default_factory=dict)
    """Detached children by parent run id, in spawn order."""

    def tier(self, depth: int) -> asyncio.Semaphore:
        """The slots of one tier."""
        if depth not in self._tiers:
            self._tiers[depth] = asyncio.Semaphore(max(1, self.containment.max_concurrent))
        return self._tiers[depth]

    def refusal(self, depth: int) -> str | None:
        """Why a spawn at `depth` is refused, or None (and then it is counted)."""
        c = self.containment
        if depth > c.max_depth:
            return f"depth cap: depth {depth} is past the tree's maximum of {c.max_depth}"
        if c.max_total_tokens is not None and self.spent >= c.max_total_tokens:
            return "budget exhausted: the tree's token ceiling is spent"
        if self.agents >= c.max_total_agents:
            return f"agent cap: the tree may hold at most {c.max_total_agents} sub-agents"
        self.agents += 1
        return None

    def draw(self, tokens: int) -> str | None:
        """Charge a committed step to the ledger; the halt reason once it passes the ceiling."""
        self.spent += tokens
        ceiling = self.containment.max_total_tokens
        if ceiling is not None and self.spent > ceiling and self.halt_reason is None:
            self.halt_reason = f"the tree's {ceiling:,}-token ceiling is reached"
        return self.halt_reason

    def status(self, d: Drive) -> None:
        """Announce the fleet's counts and the ledger."""
        d.bus.emit(
            ev.TreeStatus(
                run_id=self.root_run_id,
                agents=self.agents,
                working=self.working,
                queued=self.queued,
                done=self.done,
                tokens=self.spent,
                token_ceiling=self.containment.max_total_tokens,
            )
        )

    def spawn(self, d: Drive, n: int, position: int, call: ToolCall) -> Awaitable[ToolResult]:
        """Start (or refuse, or adopt) a child; the awaitable gives the parent's tool result."""
        args = call.arguments
        goal = args.get("goal")
        if not isinstance(goal, str) or not goal.strip():
            return _done(ToolResult("[spawn error] goal must be a non-empty string", ok=False))
        wait = args.get("wait", True)
        steps = args.get("max_steps", DEFAULT_CHILD_STEPS)
        budget = args.get("token_budget")
        if (
            not isinstance(wait, bool)
            or not _count(steps)
            or not (budget is None or _count(budget))
        ):
            return _done(
                ToolResult(
                    "[spawn error] wait must be true or false; max_steps and token_budget "
                    "positive integers",
                    ok=False,
                )
            )
        task = asyncio.ensure_future(self._child(d, n, position, goal, steps, budget, not wait))
        if wait:
            return task
        self._detached.setdefault(d.run_id, []).append(task)
        return _done(
            ToolResult(
                f"[spawned] {goal!r} works in the background; its report arrives at one of your "
                "later steps."
            )
        )

    def reports(self, d: Drive) -> list[Message]:
        """Reports of this agent's detached children that finished since it last looked."""
        waiting = self._detached.get(d.run_id, [])
        self._detached[d.run_id] = [t for t in waiting if not t.done()]
        return [Message("user", _report_text(t)) for t in waiting if t.done()]

    async def drain(self, d: Drive) -> None:
        """Wait for this agent's detached children: a tree never ends while a child works."""
        for task in self._detached.pop(d.run_id, []):
            await asyncio.gather(task, return_exceptions=True)

    async def _child(
        self, d: Drive, n: int, position: int, goal: str, steps: int, budget: int | None, bg: bool
    ) -> ToolResult:
        adopted = await d.store.spawned(d.run_id, n, position)
        if adopted is not None:
            return await self._adopt(d, adopted)
        await apply_tree_raise(d)
        refused = self.refusal(d.who_depth + 1)
        if refused is not None:
            return ToolResult(
                f"[spawn refused] {refused}; adapt, or finish with what you have",
                ok=False,
                refused=True,
            )
        self.queued += 1
        self.status(d)
        async with self.tier(d.who_depth + 1):
            self.queued -= 1
            if self.halt_reason is not None or d.cancel.cancelled:
                self.status(d)
                why = self.halt_reason or "the run was cancelled"
                return ToolResult(
                    f"[spawn refused] {why} before it started", ok=False, refused=True
                )
            child = await self._start(d, n, position, goal, steps, budget, bg)
            result = await self._work(child, 1)
        return ToolResult(_report(goal, result, _said(child)), ok=_good(result))

    async def _work(self, child: Drive, start: int) -> RunResult:
        """Drive a child that holds its tier's slot, keeping the fleet's counts."""
        # The loop imports the modules that import this one.
        from ioh_tui.engine.loop import drive, recheck_then_drive

        self.working += 1
        self.status(child)
        try:
            result = await (recheck_then_drive(child, start) if start > 1 else drive(child, start))
        finally:
            # A child's criterion is NoGate today, so this is a no-op kept for the invariant.
            await child.gate_work.close(child)
            self.working -= 1
            self.done += 1
        child.bus.emit(ev.AgentFinished(**child.who.fields(), outcome=result.outcome))
        self.status(child)
        return result

    async def _start(
        self, d: Drive, n: int, position: int, goal: str, steps: int, budget: int | None, bg: bool
    ) -> Drive:
        contract = TaskContract.workspace(goal, d.contract.root, NoGate()).with_max_steps(steps)
        if budget is not None:
            contract = contract.with_token_budget(budget)
        effective = d.gate.effective()
        policy = effective.contain(Policy((), effective.defaults))
        child_id = await d.store.start_run(
            goal=goal,
            mode="workspace",
            root=str(contract.root),
            subject=None,
            contract=contract.to_dict(),
            provider=d.provider.name,
            model=d.provider.model,
            sandbox=d.sandbox.backend,
            parent_run_id=d.run_id,
            root_run_id=self.root_run_id,
            depth=d.who_depth + 1,
        )
        label = f"agent-{child_id}"
        await d.store.set_agent_label(child_id, label)
        await d.store.set_policy(child_id, policy.to_json())
        await d.store.add_spawn(d.run_id, n, position, child_id, goal, bg)
        child = self._drive(d, child_id, label, contract, policy)
        d.bus.emit(ev.AgentSpawned(**child.who.fields(), goal=goal))
        child.bus.emit(
            ev.RunStarted(
                **child.who.fields(),
                goal=goal,
                mode="workspace",
                budgets=contract.budgets(),
                provider=child.provider.name,
                model=child.provider.model,
                sandbox=child.sandbox.backend,
            )
        )
        return child

    async def _adopt(self, d: Drive, child_id: int) -> ToolResult:
        """A resumed parent step meets a child it already made.

        A finished child is reported, never run again; an interrupted one continues from its last
        committed step (nothing it committed is redone or charged twice).
        """
        row = await d.store.run(child_id)
        if row.status != "running" and row.outcome is not None:  # a stopped run has its outcome
            result = RunResult(row.outcome, child_id, row.steps, row.tokens, row.detail)
            said = next(
                (
                    m.content
                    for m in reversed(await d.store.messages(child_id))
                    if m.role == "assistant" and m.content
                ),
                "",
            )
            return ToolResult(_report(row.goal, result, said), ok=_good(result))
        stored = await d.store.policy(child_id)
        policy = Policy.from_json(stored) if stored else d.gate.effective()
        child = self._drive(
            d, child_id, row.agent_label, TaskContract.from_dict(row.contract), policy
        )
        child.history = [m.message for m in await d.store.messages(child_id)]
        child.tokens = row.tokens
        last = await d.store.last_step(child_id)
        for attempt in await d.store.attempts(child_id, step=last + 1):
            child.journal[(last + 1, attempt.seq)] = attempt
        async with self.tier(child.who_depth):
            result = await self._work(child, last + 1)
        return ToolResult(_report(row.goal, result, _said(child)), ok=_good(result))

    def _drive(
        self, d: Drive, child_id: int, label: str, contract: TaskContract, policy: Policy
    ) -> Drive:
        for_agent = getattr(d.provider, "for_agent", None)
        return Drive(
            run_id=child_id,
            contract=contract,
            provider=for_agent(contract.goal) if callable(for_agent) else d.provider,
            store=d.store,
            sandbox=d.sandbox,
            approver=d.approver,
            bus=d.bus,
            cancel=d.cancel,
            gate=GateState(policy),
            tools=d.tools,
            workspace=d.workspace,
            who=Who(self.root_run_id, child_id, d.run_id),
            agent_label=label,
            tree=self,
            who_depth=d.who_depth + 1,
            toolchain=d.toolchain,
            project=d.project,
        )


def _good(result: RunResult) -> bool:
    return result.outcome in ("success", "finished")


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _done(result: ToolResult) -> Awaitable[ToolResult]:
    future: asyncio.Future[ToolResult] = asyncio.get_running_loop().create_future()
    future.set_result(result)
    return future


def _said(child: Drive) -> str:
    """The child's last words (its last non-empty assistant text)."""
    return next(
        (m.content for m in reversed(child.history) if m.role == "assistant" and m.content), ""
    )


def _report(goal: str, result: RunResult, said: str) -> str:
    # No run id in the text: a resumed tree numbers its unstarted children anew, and the
    # transcript must not depend on that.
    head = f'[child "{goal}" -> {result.outcome}, {result.steps} steps, {result.tokens:,} tokens]'
    return f"{head}\n{said or '(it said nothing)'}"


def _report_text(task: asyncio.Future[ToolResult]) -> str:
    if task.cancelled():
        return "[child cancelled]"
    error = task.exception()
    if error is not None:
        return f"[child failed] {error!r}"
    return task.result().output

"""Sub-agent trees: a parent spawns contained children under one shared ceiling.

- `max_total_agents`: sub-agents that may ever exist (the root not counted); a spawn past it is
  refused, as a tool result the parent reads and adapts to.
- `max_depth` (the root is 0): a deeper spawn is refused.
- `max_concurrent`: agents working at once per tier (depth); excess spawns queue, never refused.
  A parent keeps its own tier's slot while its children wait for theirs, so no cycle can form.
- `max_total_tokens`: one ledger for the whole tree; a step whose tokens pass it halts every
  agent (`cost_budget_exceeded`); a spawn when nothing is left is refused. A supervisor may raise
  it while the tree runs (`Tree.take_raise`), or when resuming a tree it stopped.
A child runs the same loop over the same workspace and store, with its parent's effective policy
contained (it can only narrow), the same approver (requests name the agent), and its own run row.
Its report returns as the spawn call's result (`wait`), or at one of the parent's later steps.

Over 400 lines: spawning, admission against the caps, adoption on resume and pausing on a
child's decision share the spawner's state; admission is the part to move out next.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from ioh_tui.context import window_for
from ioh_tui.core import events as ev
from ioh_tui.core.control import Stop
from ioh_tui.core.transcript import Message, ToolCall
from ioh_tui.engine.budgets import (
    TREE_CEILING,
    BudgetRaises,
    nearly_spent,
    raised_ceiling,
    time_left,
)
from ioh_tui.engine.bus import EventBus
from ioh_tui.engine.contract import RunResult, TaskContract
from ioh_tui.engine.decide import DecisionRules
from ioh_tui.engine.gatework import GateWork, remove_left
from ioh_tui.engine.ids import Who
from ioh_tui.engine.session import held_below, paused_on, resumed_state
from ioh_tui.engine.state import Deps, RunState
from ioh_tui.policy import Decision, Policy
from ioh_tui.store import ApprovalRow, SpawnCall, Store
from ioh_tui.tools import ToolResult
from ioh_tui.tools.registry import SPAWN_AGENT

DEFAULT_CHILD_STEPS = 8


class Driver(Protocol):
    """The loop's `drive`, handed to the tree so that it can drive its children."""

    def __call__(
        self, p: Deps, s: RunState, start: int, *, recheck: bool = False
    ) -> Awaitable[RunResult]:
        """Drive from step `start` (after the checks a crash cut, with `recheck`)."""
        ...


class Fleet(Protocol):
    """Where a tree's children are driven, when not in this process (`ioh_tui.fleet`, `--ray`).

    The seam between the tree and a cluster: the tree admits, counts and charges as ever, and
    hands each admitted child to the fleet's driver instead of the loop's `drive`.
    """

    def driver(self, drive: Driver) -> Driver:
        """The driver for the tree's children, given the loop's."""
        ...

    async def close(self) -> None:
        """Let go of the cluster (whoever made the fleet calls it once the tree has ended)."""
        ...


class Settler(Protocol):
    """The loop's `resume_step`: finish a step paused on a decision, then drive on."""

    def __call__(
        self, p: Deps, s: RunState, pending: ApprovalRow, decision: Decision | None
    ) -> Awaitable[RunResult]:
        """Perform or refuse exactly the deferred act, finish the step, go on."""
        ...


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
    """The shared state of one tree: counts, the token ledger, the per-tier slots.

    It is the `Spawner` of every agent in the tree; all of them share its store and event bus.
    """

    containment: Containment
    root_run_id: int
    store: Store
    bus: EventBus
    drive: Driver
    agents: int = 0
    """Sub-agents created so far."""
    spent: int = 0
    working: int = 1
    queued: int = 0
    done: int = 0
    halt_reason: str | None = None
    raises: BudgetRaises | None = None
    """The root's raises, where a higher `max_total_tokens` may wait (`take_raise`)."""
    settle: Settler | None = None
    """Resumes an agent paused on its own decision (a resumed tree's paused sub-agents)."""
    answer: tuple[int, Decision] | None = None
    """A resume's answer to one request of a paused sub-agent: (request id, decision)."""
    _tiers: dict[int, asyncio.Semaphore] = field(default_factory=dict)
    _detached: dict[int, list[asyncio.Future[ToolResult]]] = field(default_factory=dict)
    """Detached children by parent run id, in spawn order."""
    _waited: dict[int, list[asyncio.Future[ToolResult]]] = field(default_factory=dict)
    """Children a parent's step waits on: a paused one stops that step, and the rest finish."""
    _turn: asyncio.Future[None] | None = None
    """The latest spawn's turn to be admitted: spawns are counted in the order they were called."""

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

    async def charge(self, tokens: int) -> str | None:
        """Take a raised ceiling, charge a committed step, announce the ledger; the halt reason."""
        await self.take_raise()
        halted = self.draw(tokens)
        self.status()
        return halted

    async def afford(self, tokens: int) -> str | None:
        """Whether a prompt of `tokens` fits what is left under the ceiling; if not, halt.

        A raised ceiling is taken first: a person may have raised it while the prompt was built.
        """
        await self.take_raise()
        ceiling = self.containment.max_total_tokens
        # The ceiling's offer on screen is answered (or given up on) before the prompt is sent.
        offered = self.raises is not None and ceiling is not None
        if offered and nearly_spent(self.spent, ceiling) and await self._hold(ceiling or 0):
            await self.take_raise()
            ceiling = self.containment.max_total_tokens
        if self.halt_reason is None and ceiling is not None and self.spent + tokens > ceiling:
            self.halt_reason = (
                f"the next request needs about {tokens:,} tokens and the tree's {ceiling:,}-token "
                f"ceiling has {max(0, ceiling - self.spent):,} left"
            )
            self.status()
        return self.halt_reason

    async def _hold(self, ceiling: int) -> bool:
        return self.raises is not None and await self.raises.hold(TREE_CEILING, ceiling)

    async def take_raise(self) -> None:
        """Fold a raised ceiling into the ledger, keep it with the root run, announce it.

        Any agent of the tree takes it (when it commits a step or spawns): the root may be waiting
        on its children for most of the run. A tree already halted at its ceiling stays halted.
        """
        asked = raised_ceiling(self.raises, self.containment.max_total_tokens)
        if asked is None or self.halt_reason is not None:
            return
        self.containment = replace(self.containment, max_total_tokens=asked)
        row = await self.store.run(self.root_run_id)
        containment = {**row.contract.get("containment", {}), TREE_CEILING: asked}
        await self.store.update_contract(
            self.root_run_id, {**row.contract, "containment": containment}
        )
        self.status()

    def status(self) -> None:
        """Announce the fleet's counts and the ledger."""
        self.bus.emit(
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

    def handles(self, call: ToolCall) -> bool:
        """Spawn calls are the tree's."""
        return call.name == SPAWN_AGENT

    def spawn(
        self, parent: Deps, state: RunState, n: int, position: int, call: ToolCall
    ) -> Awaitable[ToolResult]:
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
        # Each spawn is counted (or refused) after the one called before it, whatever its store
        # reads meet; its turn passes on even if it never runs (a cancelled run).
        before, turn = self._turn, asyncio.get_running_loop().create_future()
        self._turn = turn
        order = _Order(n, position, goal, steps, budget, not wait, before, turn)
        if not wait:
            task = asyncio.ensure_future(self._detach(parent, state, order))
        else:
            task = asyncio.ensure_future(self._child(parent, state, order))
            self._waited.setdefault(parent.run_id, []).append(task)
        task.add_done_callback(lambda _: _pass(turn))
        return task

    def reports(self, run_id: int) -> list[Message]:
        """Reports of this agent's detached children that finished since it last looked.

        A child that paused on a decision has no report yet: it gives one when it is resumed.
        """
        self._waited[run_id] = [t for t in self._waited.get(run_id, []) if not t.done()]
        waiting = self._detached.get(run_id, [])
        self._detached[run_id] = [t for t in waiting if not t.done()]
        return [Message("user", _report_text(t)) for t in waiting if t.done() and not _paused(t)]

    async def drain(self, run_id: int) -> None:
        """Wait for this agent's children: a tree never ends while a child works.

        The children of a step a paused child stopped are waited for too, so none outlives it.
        """
        for task in [*self._waited.pop(run_id, []), *self._detached.pop(run_id, [])]:
            await asyncio.gather(task, return_exceptions=True)

    async def revive(self, parent: Deps, state: RunState) -> None:
        """Resume the parent's detached children that paused, in the background as they were.

        A replayed step adopts the children it waits on; a detached one's call is long committed.
        """
        for child_id in await self.store.paused_detached(parent.run_id):
            task = asyncio.ensure_future(self._run(parent, state, None, child_id))
            self._detached.setdefault(parent.run_id, []).append(task)

    async def _detach(self, parent: Deps, state: RunState, order: _Order) -> ToolResult:
        """Admit a detached child now, so that a refusal is this call's result; then start it."""
        admitted = await self._admit(parent, state, order)
        if isinstance(admitted, ToolResult):
            return admitted
        task = asyncio.ensure_future(self._run(parent, state, order, admitted))
        self._detached.setdefault(parent.run_id, []).append(task)
        return ToolResult(
            f"[spawned] {order.goal!r} works in the background; its report arrives at one of your "
            "later steps."
        )

    async def _child(self, parent: Deps, state: RunState, order: _Order) -> ToolResult:
        admitted = await self._admit(parent, state, order)
        if isinstance(admitted, ToolResult):
            return admitted
        return await self._run(parent, state, order, admitted)

    async def _admit(self, parent: Deps, state: RunState, order: _Order) -> ToolResult | int | None:
        """The child a replayed call already made, a refusal, or None: a new child is counted."""
        try:
            adopted = await self.store.spawned(parent.run_id, order.step, order.position)
            if adopted is None:
                # A store written before children were created in one transaction may hold the
                # child's run row without its spawn row (a crash between the two): adopt it.
                adopted = await self.store.adopt_orphan(
                    parent.run_id, order.step, order.position, order.goal, order.background
                )
            if adopted is not None:
                return adopted
            await self.take_raise()
            spent = await self._spent(parent, state)
            if order.before is not None:
                await asyncio.shield(order.before)
            refused = spent or self.refusal(parent.depth + 1)
        finally:
            _pass(order.turn)
        if refused is not None:
            return ToolResult(
                f"[spawn refused] {refused}; adapt, or finish with what you have",
                ok=False,
                refused=True,
            )
        return None

    async def _run(
        self, parent: Deps, state: RunState, order: _Order | None, adopted: int | None
    ) -> ToolResult:
        """Drive an admitted child (new, or `adopted`) to its report.

        A child that paused on a decision raises its `Stop`: the parent's step waiting on it
        stops there too, and a detached one is left out of the reports until it is resumed.
        """
        if adopted is not None:
            goal, result, said = await self._adopt(parent, state, adopted)
        else:
            assert order is not None  # a new child always has its call
            goal = order.goal
            started = await self._new(parent, state, order)
            if isinstance(started, ToolResult):
                return started
            result, said = started
        if result.outcome == "awaiting_approval":
            raise await held_below(self.store, parent.run_id) or Stop(
                "awaiting_approval",
                await self.store.last_step(parent.run_id),
                f"a sub-agent (run {result.run_id}) waits on a decision",
                request_id=result.request_id,
            )
        return ToolResult(_report(goal, result, said), ok=_good(result))

    async def _new(
        self, parent: Deps, state: RunState, order: _Order
    ) -> ToolResult | tuple[RunResult, str]:
        """A counted child takes its slot, starts and works; or is refused before it starts."""
        self.queued += 1
        self.status()
        async with self.tier(parent.depth + 1):
            self.queued -= 1
            contract = await self._contract(parent, state, order)
            if self.halt_reason is not None or parent.cancel.cancelled or contract is None:
                self.status()
                why = self.halt_reason or (
                    "the run was cancelled" if parent.cancel.cancelled else "its time ran out"
                )
                return ToolResult(
                    f"[spawn refused] {why} before it started", ok=False, refused=True
                )
            child, child_state = await self._start(parent, state, order, contract)
            result = await self._work(child, child_state, 1)
        return result, _said(child_state)

    async def _spent(self, parent: Deps, state: RunState) -> str | None:
        """Why the parent has nothing left to give a child, or None."""
        left = await time_left(self.store, parent.run_id, state.contract)
        if left is not None and left <= 0:
            return "time budget: your time budget is spent"
        budget = state.contract.token_budget
        if budget is not None and state.tokens >= budget:
            return "token budget: your token budget is spent"
        return None

    async def _contract(self, parent: Deps, state: RunState, order: _Order) -> TaskContract | None:
        """The child's contract, measured now (when it starts); None when no time is left.

        A child never gets more than its parent has: see `TaskContract.for_child`.
        """
        left = await time_left(self.store, parent.run_id, state.contract)
        if left is not None and left <= 0:
            return None
        budget = state.contract.token_budget
        return state.contract.for_child(
            order.goal,
            max_steps=order.max_steps,
            token_budget=order.token_budget,
            time_left_s=left,
            tokens_left=None if budget is None else max(1, budget - state.tokens),
        )

    async def _work(
        self,
        child: Deps,
        state: RunState,
        start: int,
        *,
        settle: tuple[ApprovalRow, Decision | None] | None = None,
    ) -> RunResult:
        """Drive a child that holds its tier's slot, keeping the fleet's counts.

        `settle`: the child paused on this request; it is answered first (`loop.resume_step`).
        """
        self.working += 1
        self.status()
        try:
            if settle is not None and self.settle is not None:
                result = await self.settle(child, state, *settle)
            else:
                result = await self.drive(child, state, start, recheck=start > 1)
        finally:
            # A child's criterion is NoGate today, so this is a no-op kept for the invariant.
            await child.gate_work.close(child.store, child.run_id, child.sandbox.backend)
            self.working -= 1
            self.done += 1
        self.bus.emit(ev.AgentFinished(**child.who.fields(), outcome=result.outcome))
        self.status()
        return result

    async def _start(
        self, parent: Deps, state: RunState, order: _Order, contract: TaskContract
    ) -> tuple[Deps, RunState]:
        goal = order.goal
        policy = _contained(state)
        # The run row, its policy and the spawn row are one transaction: a crash leaves a child
        # the resumed parent adopts, or none at all.
        child_id = await self.store.start_run(
            goal=goal,
            mode="workspace",
            root=str(contract.root),
            subject=None,
            contract=contract.to_dict(),
            provider=parent.provider.name,
            model=parent.provider.model,
            sandbox=parent.sandbox.backend,
            parent_run_id=parent.run_id,
            root_run_id=self.root_run_id,
            depth=parent.depth + 1,
            spawn=SpawnCall(order.step, order.position, order.background, policy.to_json()),
        )
        label = f"agent-{child_id}"
        child = self._child_deps(parent, child_id, label, goal)
        self.bus.emit(ev.AgentSpawned(**child.who.fields(), goal=goal))
        self.bus.emit(
            ev.RunStarted(
                **child.who.fields(),
                goal=goal,
                mode="workspace",
                budgets=contract.budgets(),
                provider=child.provider.name,
                model=child.provider.model,
                sandbox=child.sandbox.backend,
                context_window=window_for(child.provider.model, contract.context_window),
                instructions=child.instructions.name if child.instructions else None,
            )
        )
        return child, RunState(contract, DecisionRules(policy))

    async def _adopt(
        self, parent: Deps, state: RunState, child_id: int
    ) -> tuple[str, RunResult, str]:
        """A resumed parent meets a child it already made: its goal, how it ended, its last words.

        A finished child is reported, never run again; an interrupted one continues from its last
        committed step (nothing it committed is redone or charged twice); a paused one first
        settles the decision it stopped on (the resume's answer when it is for that request, the
        store's when the queue answered it, else its approver is asked), or, paused on a child
        of its own, resumes that child and goes on from its next step.
        """
        row = await self.store.run(child_id)
        if row.status == "completed" and row.outcome is not None:
            result = RunResult(row.outcome, child_id, row.steps, row.tokens, row.detail)
            said = next(
                (
                    m.content
                    for m in reversed(await self.store.messages(child_id))
                    if m.role == "assistant" and m.content
                ),
                "",
            )
            return row.goal, result, said
        stored = await self.store.policy(child_id)
        policy = Policy.from_json(stored) if stored else _contained(state)
        contract = TaskContract.from_dict(row.contract)
        child = self._child_deps(parent, child_id, row.agent_label, contract.goal)
        child_state, last = await resumed_state(
            self.store, child_id, contract, DecisionRules(policy), row.tokens
        )
        held = None
        if row.status == "paused":
            requests = await self.store.approvals(child_id)
            pending = [a for a in requests if a.status == "pending"]
            held = paused_on(
                child_id, requests, pending, self._answer_for(pending), child_state.history
            )
            await self.revive(child, child_state)
        await remove_left(self.store, child_id, child.sandbox.backend)
        async with self.tier(child.depth):
            result = await self._work(child, child_state, last + 1, settle=held)
        return row.goal, result, _said(child_state)

    def _answer_for(self, pending: list[ApprovalRow]) -> Decision | None:
        """The resume's answer, when it is for one of these requests (it is given once)."""
        if self.answer is None or self.answer[0] not in {a.id for a in pending}:
            return None
        decision = self.answer[1]
        self.answer = None
        return decision

    def _child_deps(self, parent: Deps, child_id: int, label: str, goal: str) -> Deps:
        """A child works with its parent's parts, under its own name, with its own gate dir."""
        for_agent = getattr(parent.provider, "for_agent", None)
        return replace(
            parent,
            run_id=child_id,
            who=Who(self.root_run_id, child_id, parent.run_id),
            agent_label=label,
            depth=parent.depth + 1,
            provider=for_agent(goal) if callable(for_agent) else parent.provider,
            raises=None,
            gate_work=GateWork(),
        )


@dataclass(frozen=True, slots=True)
class _Order:
    """One spawn call's arguments, checked."""

    step: int
    position: int
    goal: str
    max_steps: int
    token_budget: int | None
    background: bool
    before: asyncio.Future[None] | None
    """The turn of the spawn called before this one (None: the first)."""
    turn: asyncio.Future[None]
    """This spawn's turn: done once it is counted or refused."""


def _contained(parent: RunState) -> Policy:
    """A child's policy: its parent's effective policy contained (it can only narrow)."""
    effective = parent.rules.effective()
    return effective.contain(Policy((), effective.defaults))


def _good(result: RunResult) -> bool:
    return result.outcome in ("success", "finished")


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _done(result: ToolResult) -> Awaitable[ToolResult]:
    future: asyncio.Future[ToolResult] = asyncio.get_running_loop().create_future()
    future.set_result(result)
    return future


def _said(child: RunState) -> str:
    """The child's last words (its last non-empty assistant text)."""
    return next(
        (m.content for m in reversed(child.history) if m.role == "assistant" and m.content), ""
    )


def _report(goal: str, result: RunResult, said: str) -> str:
    # No run id in the text: a resumed tree numbers its unstarted children anew, and the
    # transcript must not depend on that.
    head = f'[child "{goal}" -> {result.outcome}, {result.steps} steps, {result.tokens:,} tokens]'
    return f"{head}\n{said or '(it said nothing)'}"


def _pass(turn: asyncio.Future[None]) -> None:
    if not turn.done():
        turn.set_result(None)


def _paused(task: asyncio.Future[ToolResult]) -> bool:
    """Whether a finished child task stopped on a decision (it has no report yet)."""
    return not task.cancelled() and isinstance(task.exception(), Stop)


def _report_text(task: asyncio.Future[ToolResult]) -> str:
    if task.cancelled():
        return "[child cancelled]"
    error = task.exception()
    if error is not None:
        return f"[child failed] {error!r}"
    return task.result().output

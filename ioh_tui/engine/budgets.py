"""Budgets raised while a run goes: the supervisor's "raise the limit" answer.

The app (or any caller) holds a `BudgetRaises` and calls `raise_to`; the loop takes the raised
values at its next budget check (`apply_raises`; the tree its ceiling, `raised_ceiling`), keeps
them with the run (a resume keeps them too) and announces them with `BudgetsChanged`. Only
raising is possible: a lower value is refused, because a budget cut below what is already spent
would end the run by surprise.

A supervisor that offers to raise a nearly spent budget (`BudgetRaises(offered=True)`, the app)
is waited for: from `OFFER_FROM` of a step or token budget the next model call holds
(`BudgetRaises.hold`) until the offer is answered (a raise, "let it finish", or a stop) or
`OFFER_WAIT_S` pass, so a fast model cannot spend the budget while the offer is on screen. The
time budget is not held for: holding would spend it.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace
from typing import Any

from ioh_tui.core import events as ev
from ioh_tui.core.errors import ConfigError
from ioh_tui.engine.bus import EventBus
from ioh_tui.engine.contract import TaskContract
from ioh_tui.engine.ids import Who
from ioh_tui.store import Store

ROOT_BUDGETS = ("max_steps", "time_budget_s", "token_budget")
"""The root agent's own budgets, taken at the root's budget checks."""
TREE_CEILING = "max_total_tokens"
"""The tree's shared ceiling, taken when any agent of the tree commits a step or spawns: the root
may be waiting on its children for most of the run."""
RAISABLE = (*ROOT_BUDGETS, TREE_CEILING)
"""The budgets a supervisor can raise mid-run: the root agent's, and a tree's token ceiling."""
OFFER_FROM = 0.8
"""From this share of a budget on, a supervisor offers to raise it (and the engine holds)."""
OFFER_WAIT_S = 120.0
"""How long the engine holds for an unanswered offer before it goes on without an answer."""


class BudgetRaises:
    """Raised budgets waiting for the loop to take them, and the offers the loop holds for."""

    def __init__(self, *, offered: bool = False, wait_s: float | None = None) -> None:
        self._waiting: dict[str, Any] = {}
        self.offered = offered
        """Whether a supervisor offers to raise nearly spent budgets: the engine then holds."""
        self.wait_s = OFFER_WAIT_S if wait_s is None else wait_s
        """How long one hold lasts at most."""
        self._answers: dict[tuple[str, float], asyncio.Event] = {}
        self._closed = False

    def raise_to(self, **budgets: float) -> None:
        """Ask for higher budgets (`max_steps=20`, `time_budget_s=600`, `token_budget=50_000`).

        Raises:
            ConfigError: An unknown budget, or a value that is not positive.
        """
        for name, value in budgets.items():
            if name not in RAISABLE:
                raise ConfigError(f"{name} cannot be raised (only {', '.join(RAISABLE)})")
            if value <= 0:
                raise ConfigError(f"{name} must be positive")
        self._waiting.update(
            {k: int(v) if k != "time_budget_s" else float(v) for k, v in budgets.items()}
        )
        # A raise answers the offer of that budget at any lower limit.
        for (name, limit), answered in self._answers.items():
            if name in budgets and limit < budgets[name]:
                answered.set()

    def answer(self, name: str, limit: float) -> None:
        """The offer for `name` at `limit` was answered without a raise: stop holding for it."""
        self._answered(name, limit).set()

    def close(self) -> None:
        """The run is stopping: release every hold, now and later."""
        self._closed = True
        for answered in self._answers.values():
            answered.set()

    async def hold(self, name: str, limit: float) -> bool:
        """Wait for the answer to the offer of `name` at `limit`, at most `wait_s`, once.

        Returns:
            Whether it waited (the budgets may have been raised meanwhile).
        """
        if not self.offered or self._closed:
            return False
        answered = self._answered(name, limit)
        if answered.is_set():
            return False
        try:
            await asyncio.wait_for(answered.wait(), self.wait_s)
        except TimeoutError:
            answered.set()  # held once: a supervisor who is away does not stall every later step
        return True

    def _answered(self, name: str, limit: float) -> asyncio.Event:
        answered = self._answers.setdefault((name, float(limit)), asyncio.Event())
        if self._closed:
            answered.set()
        return answered

    @property
    def waiting(self) -> bool:
        """Whether a raise has not been taken yet."""
        return bool(self._waiting)

    def take(self, names: tuple[str, ...] = ROOT_BUDGETS) -> dict[str, Any]:
        """The waiting raises of these budgets, once."""
        return {name: self._waiting.pop(name) for name in names if name in self._waiting}


async def apply_raises(
    raises: BudgetRaises | None,
    contract: TaskContract,
    *,
    store: Store,
    run_id: int,
    bus: EventBus,
    who: Who,
) -> TaskContract:
    """The contract with waiting raises folded in, kept in the store and announced."""
    if raises is None or not raises.waiting:
        return contract
    asked = raises.take(ROOT_BUDGETS)
    current = contract.budgets()
    # Only raising: a value at or below the budget in force is ignored (no budget means unbounded).
    taken = {k: v for k, v in asked.items() if current.get(k) is not None and v > current[k]}
    if not taken:
        return contract
    contract = replace(contract, **taken)
    row = await store.run(run_id)
    await store.update_contract(run_id, {**row.contract, **contract.to_dict()})
    bus.emit(ev.BudgetsChanged(**who.fields(), budgets=contract.budgets()))
    return contract


def nearly_spent(used: float, limit: float | None) -> bool:
    """Whether `used` reached the share of `limit` from which a supervisor offers a raise."""
    return bool(limit) and used >= OFFER_FROM * float(limit or 0)


async def hold_for_offers(
    raises: BudgetRaises | None, step: int, contract: TaskContract, tokens: int
) -> bool:
    """Before a model call: hold for the offers of the root's nearly spent step and token budgets.

    The step budget is offered while step `step` runs, the token budget once the committed
    `tokens` reach `OFFER_FROM` of it. Returns whether it held (take the raises again).
    """
    if raises is None or not raises.offered:
        return False
    held = False
    if contract.max_steps and nearly_spent(step, contract.max_steps):
        held = await raises.hold("max_steps", contract.max_steps) or held
    if contract.token_budget is not None and nearly_spent(tokens, contract.token_budget):
        held = await raises.hold("token_budget", contract.token_budget) or held
    return held


def raised_ceiling(raises: BudgetRaises | None, ceiling: int | None) -> int | None:
    """A waiting tree ceiling above `ceiling`, taken once; None when there is none to apply.

    Only raising, as for the root's budgets; an unbounded tree has nothing to raise.
    """
    if raises is None:
        return None
    asked = raises.take((TREE_CEILING,)).get(TREE_CEILING)
    if asked is None or ceiling is None or asked <= ceiling:
        return None
    return int(asked)


async def time_left(store: Store, run_id: int, contract: TaskContract) -> float | None:
    """Seconds left of the run's time budget, by the database clock (None: it has none)."""
    if contract.time_budget_s is None:
        return None
    return contract.time_budget_s - await store.elapsed_s(run_id)


async def deadline(store: Store, run_id: int, contract: TaskContract) -> float | None:
    """The `time.monotonic()` instant the run's time budget runs out (None: it has none).

    Everything that waits inside a step (a provider's retries, a command) stops by it.
    """
    left = await time_left(store, run_id, contract)
    return None if left is None else time.monotonic() + max(0.0, left)

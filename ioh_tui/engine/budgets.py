"""Budgets raised while a run goes: the supervisor's "raise the limit" answer.

The app (or any caller) holds a `BudgetRaises` and calls `raise_to`; the loop takes the raised
values at its next budget check (`apply_raises`; the tree its ceiling, `raised_ceiling`), keeps
them with the run (a resume keeps them too) and announces them with `BudgetsChanged`. Only
raising is possible: a lower value is refused, because a budget cut below what is already spent
would end the run by surprise.
"""

from __future__ import annotations

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


class BudgetRaises:
    """Raised budgets waiting for the loop to take them."""

    def __init__(self) -> None:
        self._waiting: dict[str, Any] = {}

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

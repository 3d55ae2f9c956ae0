"""Budgets raised while a run goes: the supervisor's "raise the limit" answer.

The app (or any caller) holds a `BudgetRaises` and calls `raise_to`; the loop takes the raised
values at its next budget check, keeps them with the run (a resume keeps them too) and announces
them with `BudgetsChanged`. Only raising is possible: a lower value is refused, because a budget
cut below what is already spent would end the run by surprise.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ioh_tui.core import events as ev
from ioh_tui.core.errors import ConfigError
from ioh_tui.engine.state import Drive

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


async def apply_raises(d: Drive) -> None:
    """Fold waiting raises into the drive's contract, keep them in the store and announce them."""
    if d.raises is None or not d.raises.waiting:
        return
    asked = d.raises.take(ROOT_BUDGETS)
    current = d.contract.budgets()
    # Only raising: a value at or below the budget in force is ignored (no budget means unbounded).
    taken = {k: v for k, v in asked.items() if current.get(k) is not None and v > current[k]}
    if not taken:
        return
    d.contract = replace(d.contract, **taken)
    row = await d.store.run(d.run_id)
    await d.store.update_contract(d.run_id, {**row.contract, **d.contract.to_dict()})
    d.bus.emit(ev.BudgetsChanged(**d.who.fields(), budgets=d.contract.budgets()))


async def apply_tree_raise(d: Drive) -> None:
    """Fold a raised tree ceiling into the shared ledger, keep it with the root run, announce it.

    Only raising, as for the root's budgets; a tree already halted at its ceiling stays halted.
    """
    tree = d.tree
    if tree is None or tree.raises is None:
        return
    asked = tree.raises.take((TREE_CEILING,)).get(TREE_CEILING)
    ceiling = tree.containment.max_total_tokens
    if asked is None or ceiling is None or asked <= ceiling or tree.halt_reason is not None:
        return
    tree.containment = replace(tree.containment, max_total_tokens=asked)
    row = await d.store.run(tree.root_run_id)
    containment = {**row.contract.get("containment", {}), TREE_CEILING: asked}
    await d.store.update_contract(tree.root_run_id, {**row.contract, "containment": containment})
    tree.status(d)

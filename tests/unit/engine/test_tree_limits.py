"""The tree's limits alone: which spawn is refused and why, and when the ledger halts the tree."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable
from pathlib import Path

import pytest

from ioh_tui.core.events import Event, TreeStatus
from ioh_tui.core.transcript import ToolCall
from ioh_tui.engine.budgets import BudgetRaises
from ioh_tui.engine.bus import EventBus
from ioh_tui.engine.contract import RunResult
from ioh_tui.engine.state import FLAT, Deps, RunState
from ioh_tui.engine.tree import Containment, Tree
from ioh_tui.store import Store


def _never(p: Deps, s: RunState, start: int, *, recheck: bool = False) -> Awaitable[RunResult]:
    raise AssertionError("no child is driven here")


@pytest.fixture
async def store() -> AsyncIterator[Store]:
    async with Store.memory() as opened:
        yield opened


def _tree(store: Store, events: list[Event], containment: Containment) -> Tree:
    return Tree(containment, 1, store, EventBus([events.append]), _never)


async def test_each_cap_refuses_with_its_reason_and_only_an_accepted_spawn_counts(
    store: Store,
) -> None:
    tree = _tree(store, [], Containment(max_total_agents=2, max_depth=1, max_total_tokens=100))

    assert tree.refusal(2) == "depth cap: depth 2 is past the tree's maximum of 1"
    assert tree.agents == 0
    assert tree.refusal(1) is None
    assert tree.refusal(1) is None
    assert tree.agents == 2
    assert tree.refusal(1) == "agent cap: the tree may hold at most 2 sub-agents"
    tree.spent = 100
    assert tree.refusal(1) == "budget exhausted: the tree's token ceiling is spent"


async def test_the_ledger_halts_the_tree_once_past_its_ceiling(store: Store) -> None:
    events: list[Event] = []
    tree = _tree(store, events, Containment(max_total_tokens=100))

    assert await tree.charge(60) is None
    assert await tree.charge(40) is None  # at the ceiling, not past it
    assert await tree.charge(1) == "the tree's 100-token ceiling is reached"
    assert tree.halt_reason == "the tree's 100-token ceiling is reached"
    assert [e.tokens for e in events if isinstance(e, TreeStatus)] == [60, 100, 101]


async def test_a_raised_ceiling_is_taken_before_the_charge(store: Store, tmp_path: Path) -> None:
    run_id = await store.start_run(
        goal="g",
        mode="workspace",
        root=str(tmp_path),
        subject=None,
        contract={"containment": {"max_total_tokens": 100}},
        provider="scripted",
        model=None,
        sandbox="floor",
    )
    raises = BudgetRaises()
    tree = Tree(Containment(max_total_tokens=100), run_id, store, EventBus(), _never, raises=raises)
    raises.raise_to(max_total_tokens=500)

    assert await tree.charge(150) is None
    assert tree.containment.max_total_tokens == 500
    assert (await store.run(run_id)).contract["containment"]["max_total_tokens"] == 500


async def test_a_flat_run_has_no_tree_to_spawn_in_or_charge() -> None:
    call = ToolCall("c1", "spawn_agent", {"goal": "x"})

    assert FLAT.handles(call) is False
    assert FLAT.halt_reason is None
    assert FLAT.reports(1) == []
    assert await FLAT.charge(10**9) is None

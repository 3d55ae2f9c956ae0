"""Budgets raised while a run goes: taken at the next check, kept with the run, announced."""

from __future__ import annotations

from pathlib import Path

import pytest

from ioh_tui.core.errors import ConfigError
from ioh_tui.core.events import Event, StepFinished, StepStarted
from ioh_tui.engine import BudgetRaises, TaskContract, resume, run
from ioh_tui.sandbox import select
from ioh_tui.store import Store
from tests.integration.engine.helpers import CHECK, READ_CALC, Recorder, scripted


class RaiseAt:
    """An observer raising budgets when a given step of the root commits (a supervisor's key)."""

    def __init__(self, raises: BudgetRaises, step: int, **budgets: float) -> None:
        self.raises, self.step, self.budgets = raises, step, budgets

    def __call__(self, event: Event) -> None:
        if isinstance(event, StepFinished) and event.step == self.step:
            self.raises.raise_to(**self.budgets)


async def test_a_raised_step_cap_lets_the_run_go_on_and_is_kept(
    project: Path, tmp_path: Path
) -> None:
    raises = BudgetRaises()
    seen = Recorder()
    provider = scripted(*[{"tool_calls": [READ_CALC]}] * 10)
    contract = TaskContract.workspace("never done", project, CHECK).with_max_steps(3)
    async with Store.open(tmp_path / "trace.db") as store:
        result = await run(
            contract,
            provider,
            store=store,
            sandbox=select("floor"),
            observers=[seen, RaiseAt(raises, 2, max_steps=5)],
            raises=raises,
        )
        stored = await store.run(result.run_id)
    assert (result.outcome, result.steps) == ("step_cap_reached", 5)
    changed = seen.of("budgets_changed")
    assert [e.budgets["max_steps"] for e in changed] == [5]
    # Announced between step 2's end and step 3's start: the meters move before the step runs.
    third = next(i for i, e in enumerate(seen.events) if isinstance(e, StepStarted) and e.step == 3)
    assert seen.kinds().index("budgets_changed") < third
    assert stored.contract["max_steps"] == 5  # a resume keeps the raised cap


async def test_a_raised_token_budget_is_taken_before_the_check_that_would_stop_it(
    project: Path,
) -> None:
    raises = BudgetRaises()
    turn = {"tool_calls": [READ_CALC], "usage": {"input_tokens": 600, "output_tokens": 400}}
    provider = scripted(*[turn] * 6)
    contract = (
        TaskContract.workspace("never done", project, CHECK)
        .with_max_steps(4)
        .with_token_budget(2500)
    )
    async with Store.memory() as store:
        capped = await run(contract, scripted(*[turn] * 6), store=store, sandbox=select("floor"))
        raised = await run(
            contract,
            provider,
            store=store,
            sandbox=select("floor"),
            observers=[RaiseAt(raises, 1, token_budget=10_000)],
            raises=raises,
        )
    # 1,000 a step: step 3's prompt (about 600) would pass the 500 left, so it is never sent.
    assert (capped.outcome, capped.steps) == ("cost_budget_exceeded", 2)
    assert (raised.outcome, raised.steps) == ("step_cap_reached", 4)


async def test_lowering_a_budget_is_ignored(project: Path) -> None:
    raises = BudgetRaises()
    seen = Recorder()
    provider = scripted(*[{"tool_calls": [READ_CALC]}] * 5)
    contract = TaskContract.workspace("never done", project, CHECK).with_max_steps(3)
    async with Store.memory() as store:
        result = await run(
            contract,
            provider,
            store=store,
            sandbox=select("floor"),
            observers=[seen, RaiseAt(raises, 1, max_steps=2)],
            raises=raises,
        )
    assert (result.outcome, result.steps) == ("step_cap_reached", 3)
    assert seen.of("budgets_changed") == []


async def test_a_resumed_run_takes_raises_too(project: Path, tmp_path: Path) -> None:
    turns = [{"tool_calls": [READ_CALC]}] * 8
    contract = TaskContract.workspace("never done", project, CHECK).with_max_steps(2)
    async with Store.open(tmp_path / "trace.db") as store:
        first = await run(contract, scripted(*turns), store=store, sandbox=select("floor"))
        raises = BudgetRaises()
        raises.raise_to(max_steps=4)
        again = await resume(
            first.run_id, scripted(*turns), store=store, sandbox=select("floor"), raises=raises
        )
    assert (first.steps, again.outcome, again.steps) == (2, "step_cap_reached", 4)


@pytest.mark.parametrize(
    ("budgets", "message"),
    [
        ({"max_retries": 9}, "max_retries cannot be raised"),
        ({"max_steps": 0}, "max_steps must be positive"),
    ],
)
def test_what_cannot_be_raised_is_refused(budgets: dict[str, float], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        BudgetRaises().raise_to(**budgets)

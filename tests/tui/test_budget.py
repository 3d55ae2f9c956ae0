"""A nearly spent budget: the app offers to raise it, stop the run, or let it finish."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Input

from ioh_tui.engine import Containment, TaskContract, budgets, run_tree
from ioh_tui.policy import Policy
from ioh_tui.sandbox import select
from ioh_tui.store import Store
from ioh_tui.tui.factory import make_app
from ioh_tui.tui.screens.budget import BudgetModal
from tests.snapshots.apps.fleet import tree_app
from tests.tui.harness import (
    CHECK,
    FIX_CALC,
    READ_CALC,
    USAGE,
    build,
    calc_project,
    finished,
    run_screen,
    until,
)
from tests.tui.stored_runs import resumer_with, tree_provider

SLOW_READ = {"tool_calls": [READ_CALC], "usage": USAGE}
# The step the offer comes at waits for the model long enough for a person to answer: the raise
# must land before the loop checks the cap (a real person is slower still; the loop is patient).
WAITING = {**SLOW_READ, "delay_ms": 1500}


@pytest.fixture(autouse=True)
def _patient(monkeypatch: pytest.MonkeyPatch) -> None:
    """Here the engine holds for an offer as the app does (the suite shortens it elsewhere)."""
    monkeypatch.setattr(budgets, "OFFER_WAIT_S", 60.0)


async def test_raising_the_step_cap_lets_the_run_go_on(tmp_path: Path) -> None:
    app = build(tmp_path, SLOW_READ, SLOW_READ, WAITING, SLOW_READ, SLOW_READ, max_steps=3)
    async with app.run_test(size=(120, 36)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, BudgetModal))
        offer = app.screen
        assert isinstance(offer, BudgetModal)
        assert offer.budget.describe() == "3 of 3 steps"
        await pilot.press("r")
        field = offer.query_one("#budget-limit", Input)
        assert field.value == "6" and field.has_focus
        field.value = "5"
        await pilot.press("enter")
        # 4 of 5 is offered in turn; the run holds for that answer too.
        await until(pilot, lambda: isinstance(app.screen, BudgetModal) and app.screen is not offer)
        await pilot.press("f")
        await finished(pilot)
        screen = run_screen(app)
        assert (screen.outcome, screen.totals.max_steps, screen.totals.step) == (
            "step_cap_reached",
            5,
            5,
        )
    assert app.result is not None and app.result.steps == 5


async def test_stop_from_the_offer_cancels_the_run(tmp_path: Path) -> None:
    app = build(tmp_path, SLOW_READ, WAITING, SLOW_READ, max_steps=2)
    async with app.run_test(size=(120, 36)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, BudgetModal))
        await pilot.press("s")
        await finished(pilot)
        assert run_screen(app).outcome == "cancelled"


async def test_letting_it_finish_ends_at_the_budget_and_is_offered_once(tmp_path: Path) -> None:
    # Short prompts, long answers: step 3's prompt (about 200 tokens) fits in what is left, so it
    # is sent, and its answer passes the budget (a prompt that alone would pass it is not sent).
    talk = {**SLOW_READ, "usage": {"input_tokens": 200, "output_tokens": 760}}
    app = build(tmp_path, talk, talk, {**talk, "delay_ms": 1500}, talk, token_budget=2400)
    offers: list[str] = []
    async with app.run_test(size=(120, 36)) as pilot:
        while run_screen(app).outcome is None:
            if isinstance(app.screen, BudgetModal):
                offers.append(app.screen.budget.describe())
                await pilot.press("f")
            await pilot.pause(0.02)
        await finished(pilot)
        assert run_screen(app).outcome == "cost_budget_exceeded"
    # 960 tokens a step: 1,920 of 2,400 after step 2 is 80 %; the offer is not made again.
    assert offers == ["1.9k of 2.4k tokens"]


async def test_a_lower_limit_is_refused_in_the_field(tmp_path: Path) -> None:
    app = build(tmp_path, SLOW_READ, {**SLOW_READ, "delay_ms": 3000}, max_steps=2)
    async with app.run_test(size=(120, 36)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, BudgetModal))
        await pilot.press("r")
        offer = app.screen
        assert isinstance(offer, BudgetModal)
        offer.query_one("#budget-limit", Input).value = "2"
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is offer  # still asking: 2 is not higher than 2
        await pilot.press("escape", "escape")
        await until(pilot, lambda: not isinstance(app.screen, BudgetModal))
        await finished(pilot)
        assert run_screen(app).outcome == "step_cap_reached"


async def test_the_trees_ceiling_is_offered_too_and_raising_it_lets_every_child_finish(
    tmp_path: Path,
) -> None:
    # One child at a time, each 1,920 tokens: the offer comes at 7,680 of 9,000 (80 %), while the
    # next child waits 0.6 s for its model; its second prompt would not fit what is left.
    app = tree_app(tmp_path, 6, max_concurrent=1, delay_ms=600, ceiling=9000)
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, BudgetModal))
        offer = app.screen
        assert isinstance(offer, BudgetModal)
        assert offer.budget.name == "max_total_tokens"
        assert offer.budget.describe() == "7.7k of 9.0k tokens, the whole tree"
        # At once, as a person answering fast would: r may come before the field is composed.
        await pilot.press("r")
        await until(pilot, lambda: bool(offer.query("#budget-limit")))
        field = offer.query_one("#budget-limit", Input)
        await until(pilot, lambda: field.has_focus)
        assert field.value == "18000"
        await pilot.press("enter")
        await finished(pilot)
        screen = run_screen(app)
        root_label = str(screen.agent_tree.root.label)
    assert app.result is not None and app.result.outcome == "finished"
    assert screen.totals.tree_ceiling == 18_000 and "13k/18k tok" in root_label


async def test_a_tree_its_ceiling_stopped_resumes_from_the_app_with_a_higher_one(
    tmp_path: Path,
) -> None:
    db = tmp_path / "store.db"
    async with Store.open(db) as store:
        stopped = await run_tree(
            TaskContract.workspace("survey", calc_project(tmp_path / "p"), CHECK),
            tree_provider(),  # two children, 960 tokens each
            store=store,
            containment=Containment(max_total_agents=2, max_concurrent=1, max_total_tokens=1000),
            policy=Policy.permissive(),
            sandbox=select("floor"),
        )
    assert stopped.outcome == "cost_budget_exceeded"
    # The scripted model plays the root's turns by step: step 2 fixes calc.py.
    resumer = resumer_with({"text": "(step 1 is in the store)"}, {"tool_calls": [FIX_CALC]})
    app = make_app(db, resumer=resumer)
    app.animation_level = "none"
    async with app.run_test(size=(120, 36)) as pilot:
        await app.workers.wait_for_complete()
        app.resume_run(stopped.run_id)
        await until(pilot, lambda: isinstance(app.screen, BudgetModal))
        offer = app.screen
        assert isinstance(offer, BudgetModal) and offer.stopped == stopped.run_id
        budget = offer.budget
        assert budget.name == "max_total_tokens" and budget.limit == 1000 and budget.used > 1000
        await pilot.press("r")
        field = offer.query_one("#budget-limit", Input)
        assert field.value == str(int(budget.used * 2))  # past what is spent, or it stops again
        await pilot.press("enter")
        await until(pilot, lambda: app.result is not None)
    assert app.result is not None and app.result.outcome == "success"
    async with Store.open(db) as store:
        run = await store.run(stopped.run_id)
    assert run.contract["containment"]["max_total_tokens"] == int(budget.used * 2)


async def test_a_fast_model_waits_for_the_offer_and_its_raise_is_taken(tmp_path: Path) -> None:
    # No delay at all: without the hold the run reached its cap before the offer was read.
    app = build(tmp_path, *[SLOW_READ] * 6, max_steps=3)
    async with app.run_test(size=(120, 36)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, BudgetModal))
        offer = app.screen
        assert isinstance(offer, BudgetModal)
        assert offer.budget.describe() == "3 of 3 steps"
        await pilot.pause(0.5)  # a fast model would have run on by now
        screen = run_screen(app)
        assert app.running and screen.outcome is None and screen.totals.step == 3
        await pilot.press("r")
        offer.query_one("#budget-limit", Input).value = "5"
        await pilot.press("enter")
        # 4 of 5 is offered in turn, and held for too: let it finish.
        await until(pilot, lambda: isinstance(app.screen, BudgetModal) and app.screen is not offer)
        assert isinstance(app.screen, BudgetModal)
        assert app.screen.budget.describe() == "4 of 5 steps"
        await pilot.pause(0.3)
        assert run_screen(app).totals.step == 4
        await pilot.press("f")
        await finished(pilot)
    assert app.result is not None
    assert (app.result.outcome, app.result.steps) == ("step_cap_reached", 5)


async def test_a_fast_tree_waits_for_its_ceilings_offer(tmp_path: Path) -> None:
    # No model delay: without the hold the next child's prompt found the ceiling too close and
    # the tree halted while the offer was still on screen.
    app = tree_app(tmp_path, 6, max_concurrent=1, ceiling=9000)
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, BudgetModal))
        offer = app.screen
        assert isinstance(offer, BudgetModal)
        assert offer.budget.name == "max_total_tokens"
        await pilot.pause(0.5)
        screen = run_screen(app)
        assert app.running and screen.totals.tree_tokens == 7680  # held: nothing more spent
        await pilot.press("r")
        await until(pilot, lambda: bool(offer.query("#budget-limit")))
        await pilot.press("enter")  # the suggested 18,000
        await finished(pilot)
    assert app.result is not None and app.result.outcome == "finished"

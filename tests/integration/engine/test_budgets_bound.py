"""Budgets bound everything: a command stops with the time budget, a child never gets more."""

from __future__ import annotations

import dataclasses
import sys
import time
from pathlib import Path
from typing import Any

from ioh_tui.engine import Containment, TaskContract, run, run_tree
from ioh_tui.policy import Policy
from ioh_tui.providers import ScriptedProvider
from ioh_tui.providers.testing.scenario import parse_scenario
from ioh_tui.sandbox import select
from ioh_tui.store import Store
from ioh_tui.verification import NoGate
from tests.integration.engine.helpers import Recorder, scripted

SLEEP = {
    "name": "exec",
    "arguments": {"argv": [sys.executable, "-c", "import time; time.sleep(30)"]},
}


def _spawning(child: dict[str, Any], **arguments: Any) -> ScriptedProvider:
    return ScriptedProvider(
        parse_scenario(
            {
                "turns": [
                    {
                        "text": "Delegating.",
                        "tool_calls": [
                            {"name": "spawn_agent", "arguments": {"goal": "child", **arguments}}
                        ],
                    },
                    {"text": "Done."},
                ],
                "agents": {"child": child},
            }
        )
    )


async def test_a_command_is_killed_when_the_time_budget_runs_out(project: Path) -> None:
    began = time.monotonic()
    async with Store.memory() as store:
        result = await run(
            TaskContract.workspace("wait", project, NoGate()).with_time_budget(2),
            scripted({"text": "Waiting.", "tool_calls": [SLEEP]}, {"text": "Never asked."}),
            store=store,
            policy=Policy.permissive(),
            sandbox=select("floor"),
        )
        calls = await store.tool_calls(result.run_id)
    took = time.monotonic() - began
    # The command's 900 s exec timeout is cut to the ~2 s left, and the run ends there.
    assert (result.outcome, result.steps) == ("time_budget_exceeded", 1)
    assert took < 10, took
    assert calls[0].output.startswith("[exec timed out]")


async def test_a_child_inherits_the_time_left_the_exec_timeout_and_no_larger_caps(
    project: Path,
) -> None:
    child = {"turns": [{"text": "Child done."}]}
    seen = Recorder()
    root = dataclasses.replace(
        TaskContract.workspace("split", project, NoGate())
        .with_max_steps(2)
        .with_time_budget(300)
        .with_token_budget(50_000),
        exec_timeout_s=7.0,
    )
    async with Store.memory() as store:
        result = await run_tree(
            root,
            _spawning(child, max_steps=100_000, token_budget=10**9),
            store=store,
            containment=Containment(max_total_agents=2, max_depth=1),
            policy=Policy.permissive(),
            sandbox=select("floor"),
            observers=[seen],
        )
        (kid,) = await store.children(result.run_id)
    assert result.outcome == "finished"
    stored = TaskContract.from_dict(kid.contract)
    assert stored.max_steps == 2  # asked for 100,000 under a 2-step parent
    assert stored.exec_timeout_s == 7.0
    assert stored.token_budget is not None and stored.token_budget <= 50_000
    assert stored.time_budget_s is not None and 290 < stored.time_budget_s <= 300
    started = [e for e in seen.of("run_started") if e.agent_id == kid.id]
    assert started[0].budgets["max_steps"] == 2


async def test_a_child_gets_what_the_parent_has_left_when_it_asks_for_nothing(
    project: Path,
) -> None:
    async with Store.memory() as store:
        result = await run_tree(
            TaskContract.workspace("split", project, NoGate()).with_token_budget(40_000),
            _spawning({"turns": [{"text": "Child done."}]}),
            store=store,
            containment=Containment(max_total_agents=2, max_depth=1),
            policy=Policy.permissive(),
            sandbox=select("floor"),
        )
        (kid,) = await store.children(result.run_id)
    stored = TaskContract.from_dict(kid.contract)
    assert stored.token_budget == 40_000 and stored.time_budget_s is None
    assert stored.max_steps == 8  # the default child cap, under the parent's 12


async def test_a_childs_command_stops_with_the_roots_time_budget(project: Path) -> None:
    began = time.monotonic()
    child = {"turns": [{"text": "Child waiting.", "tool_calls": [SLEEP]}, {"text": "Late."}]}
    async with Store.memory() as store:
        result = await run_tree(
            TaskContract.workspace("split", project, NoGate()).with_time_budget(3),
            _spawning(child),
            store=store,
            containment=Containment(max_total_agents=2, max_depth=1),
            policy=Policy.permissive(),
            sandbox=select("floor"),
        )
        (kid,) = await store.children(result.run_id)
    took = time.monotonic() - began
    assert took < 12, took
    assert kid.outcome == "time_budget_exceeded"
    assert result.outcome == "time_budget_exceeded"

"""Sub-agent trees under one containment: queueing, refusals, the shared ceiling, narrowing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ioh_tui.core.acts import Act, Effect
from ioh_tui.core.errors import ConfigError, ResumeError
from ioh_tui.core.events import Event, TreeStatus
from ioh_tui.engine import BudgetRaises, Containment, TaskContract, resume, run_tree
from ioh_tui.policy import ApproveAll, Policy
from ioh_tui.providers import ScriptedProvider
from ioh_tui.providers.testing.scenario import parse_scenario
from ioh_tui.sandbox import select
from ioh_tui.store import Store
from ioh_tui.verification import NoGate
from tests.integration.engine.helpers import Recorder

CHILD = {
    "turns": [
        {
            "text": "Looking.",
            "delay_ms": 5,
            "tool_calls": [{"name": "read_file", "arguments": {"path": "calc.py"}}],
        },
        {"text": "Child done.", "usage": {"input_tokens": 50, "output_tokens": 10}},
    ]
}


def tree_model(
    children: int, *, wait: bool = True, child: dict[str, Any] = CHILD
) -> ScriptedProvider:
    spawns = [
        {"name": "spawn_agent", "arguments": {"goal": f"child task {i}", "wait": wait}}
        for i in range(children)
    ]
    return ScriptedProvider(
        parse_scenario(
            {
                "turns": [
                    {"text": "Splitting the work.", "tool_calls": spawns},
                    {"text": "All done."},
                ],
                "agents": {"child task": child},
            }
        )
    )


def most_at_once(seen: Recorder) -> int:
    working = peak = 0
    for event in seen.events:
        if event.kind == "agent_spawned":
            working += 1
            peak = max(peak, working)
        elif event.kind == "agent_finished":
            working -= 1
    return peak


async def test_120_children_never_more_than_16_at_once(project: Path) -> None:
    seen = Recorder()
    async with Store.memory() as store:
        result = await run_tree(
            TaskContract.workspace("split", project, NoGate()),
            tree_model(120),
            store=store,
            containment=Containment(max_total_agents=200, max_concurrent=16, max_depth=1),
            policy=Policy.permissive(),
            sandbox=select("floor"),
            observers=[seen],
        )
        children = await store.children(result.run_id)
        calls = [c for c in await store.tool_calls(result.run_id) if c.name == "spawn_agent"]
    assert (result.outcome, result.steps) == ("finished", 2)
    assert len(seen.of("agent_spawned")) == 120 == len(seen.of("agent_finished"))
    assert most_at_once(seen) == 16
    assert len(children) == 120 and all(c.outcome == "finished" and c.depth == 1 for c in children)
    spawned = seen.of("agent_spawned")
    assert all(e.parent_id == result.run_id and e.run_id == result.run_id for e in spawned)
    child_events = [e for e in seen.events if e.agent_id not in (None, result.run_id)]
    assert child_events and all(e.parent_id == result.run_id for e in child_events)
    assert seen.events[-1].kind == "run_finished" and seen.events[-1].agent_id == result.run_id
    # Reports fold back in spawn order.
    assert [c.arguments["goal"] for c in calls] == [f"child task {i}" for i in range(120)]
    assert all("-> finished" in c.output and "Child done." in c.output for c in calls)


async def test_agent_cap_of_50_spawns_50_and_refuses_70(project: Path) -> None:
    async with Store.memory() as store:
        result = await run_tree(
            TaskContract.workspace("split", project, NoGate()),
            tree_model(120),
            store=store,
            containment=Containment(max_total_agents=50, max_concurrent=8, max_depth=1),
            policy=Policy.permissive(),
            sandbox=select("floor"),
        )
        calls = await store.tool_calls(result.run_id)
        children = await store.children(result.run_id)
    refused = [c for c in calls if c.refused]
    assert len(children) == 50 and len(refused) == 70
    assert all("[spawn refused] agent cap" in c.output for c in refused)
    assert result.outcome == "finished"


async def test_a_token_ceiling_reached_mid_tree_stops_every_agent(project: Path) -> None:
    slow_child = {
        "turns": [
            {
                "delay_ms": 10,
                "tool_calls": [{"name": "read_file", "arguments": {"path": "calc.py"}}],
                "usage": {"input_tokens": 100, "output_tokens": 20},
            }
        ]
        * 20
    }
    seen = Recorder()
    async with Store.memory() as store:
        result = await run_tree(
            TaskContract.workspace("split", project, NoGate()),
            tree_model(40, child=slow_child),
            store=store,
            containment=Containment(
                max_total_agents=100, max_concurrent=4, max_depth=1, max_total_tokens=3000
            ),
            policy=Policy.permissive(),
            sandbox=select("floor"),
            observers=[seen],
        )
        tree = await store.tree(result.run_id)
        spent = await store.tree_tokens(result.run_id)
    assert result.outcome == "cost_budget_exceeded"
    children = [r for r in tree if r.parent_run_id is not None]
    assert all(r.status == "completed" for r in tree)
    assert {r.outcome for r in children} == {"cost_budget_exceeded"}
    assert len(children) < 40  # queued children never started
    # Past the ceiling: only the steps in flight when it was reached (4 children's) and the root's
    # own spawning step, which is charged when its children have reported.
    assert 3000 < spent <= 3000 + 4 * 120 + result.tokens


async def test_a_child_cannot_read_what_its_parent_denies(project: Path) -> None:
    (project / "secret.txt").write_text("the parent may not read this\n")
    child = {
        "turns": [
            {"tool_calls": [{"name": "read_file", "arguments": {"path": "secret.txt"}}]},
            {"text": "ok"},
        ]
    }
    parent = Policy.permissive().layer("ops").deny_read("secret.txt")
    async with Store.memory() as store:
        result = await run_tree(
            TaskContract.workspace("split", project, NoGate()),
            tree_model(1, child=child),
            store=store,
            containment=Containment(max_total_agents=4, max_concurrent=2, max_depth=1),
            policy=parent,
            sandbox=select("floor"),
        )
        (kid,) = await store.children(result.run_id)
        (read,) = await store.tool_calls(kid.id)
    assert read.refused and "rule 'secret.txt' in layer 'ops'" in read.output
    assert "may not read" not in read.output
    # Even a child overlay that allows it cannot lift the parent's deny.
    assert (
        parent.contain(Policy.permissive().layer("kid").allow_read("*")).check(
            Act.READ, "secret.txt"
        )
        is Effect.DENY
    )


async def test_depth_cap_refuses_grandchildren(project: Path) -> None:
    grandchild_spawner = {
        "turns": [
            {"tool_calls": [{"name": "spawn_agent", "arguments": {"goal": "grandchild"}}]},
            {"text": "ok"},
        ]
    }
    async with Store.memory() as store:
        result = await run_tree(
            TaskContract.workspace("split", project, NoGate()),
            tree_model(1, child=grandchild_spawner),
            store=store,
            containment=Containment(max_total_agents=10, max_concurrent=2, max_depth=1),
            policy=Policy.permissive(),
            sandbox=select("floor"),
        )
        (kid,) = await store.children(result.run_id)
        (spawn,) = await store.tool_calls(kid.id)
    assert spawn.refused and "depth cap" in spawn.output


async def test_detached_children_report_at_a_later_step(project: Path) -> None:
    provider = ScriptedProvider(
        parse_scenario(
            {
                "turns": [
                    {
                        "tool_calls": [
                            {
                                "name": "spawn_agent",
                                "arguments": {"goal": "background job", "wait": False},
                            }
                        ]
                    },
                    {
                        "delay_ms": 300,
                        "tool_calls": [{"name": "read_file", "arguments": {"path": "calc.py"}}],
                    },
                    {"text": "done"},
                ],
                "agents": {"background": CHILD},
            }
        )
    )
    async with Store.memory() as store:
        result = await run_tree(
            TaskContract.workspace("split", project, NoGate()),
            provider,
            store=store,
            containment=Containment(max_total_agents=4, max_concurrent=2, max_depth=1),
            policy=Policy.permissive(),
            sandbox=select("floor"),
        )
        messages = await store.messages(result.run_id)
    assert result.outcome == "finished"
    first = next(m for m in messages if m.role == "tool")
    assert first.content.startswith("[spawned] 'background job' works in the background")
    report = next(m for m in messages if m.role == "user" and m.content.startswith("[child"))
    assert report.step in (2, 3) and "-> finished" in report.content


async def test_a_childs_decision_reaches_the_same_approver_naming_the_agent(project: Path) -> None:
    writer = {
        "turns": [
            {
                "tool_calls": [
                    {"name": "write_file", "arguments": {"path": "notes.txt", "content": "hi"}}
                ]
            },
            {"text": "ok"},
        ]
    }
    approver = ApproveAll()
    async with Store.memory() as store:
        result = await run_tree(
            TaskContract.workspace("split", project, NoGate()),
            tree_model(1, child=writer),
            store=store,
            containment=Containment(max_total_agents=2, max_concurrent=1, max_depth=1),
            approver=approver,
            sandbox=select("floor"),
        )
        (kid,) = await store.children(result.run_id)
    (request,) = approver.seen
    assert (request.target, request.agent_label, request.run_id) == (
        "notes.txt",
        f"agent-{kid.id}",
        kid.id,
    )
    assert (project / "notes.txt").read_text() == "hi"


async def test_a_ceiling_raised_while_the_root_waits_on_its_children_lets_the_tree_finish(
    project: Path, tmp_path: Path
) -> None:
    raises = BudgetRaises()

    def supervisor(event: Event) -> None:
        # A supervisor's key, once the tree has spent half of its ceiling.
        if isinstance(event, TreeStatus) and event.token_ceiling == 3000 and event.tokens >= 1500:
            raises.raise_to(max_total_tokens=9000)

    seen = Recorder()
    child = {
        "turns": [
            {
                "delay_ms": 5,
                "tool_calls": [{"name": "read_file", "arguments": {"path": "calc.py"}}],
                "usage": {"input_tokens": 100, "output_tokens": 20},
            }
        ]
        * 4
        + [{"text": "Child done.", "usage": {"input_tokens": 100, "output_tokens": 20}}]
    }
    async with Store.open(tmp_path / "trace.db") as store:
        result = await run_tree(
            TaskContract.workspace("split", project, NoGate()),
            tree_model(8, child=child),
            store=store,
            containment=Containment(
                max_total_agents=8, max_concurrent=4, max_depth=1, max_total_tokens=3000
            ),
            policy=Policy.permissive(),
            sandbox=select("floor"),
            observers=[seen, supervisor],
            raises=raises,
        )
        spent = await store.tree_tokens(result.run_id)
        stored = await store.run(result.run_id)
    # 8 children x 600 tokens: past the first ceiling, within the raised one.
    assert result.outcome == "finished" and 3000 < spent <= 9000
    ceilings = [e.token_ceiling for e in seen.of("tree_status")]
    assert 9000 in ceilings and ceilings[-1] == 9000
    assert stored.contract["containment"]["max_total_tokens"] == 9000  # a resume keeps it


def test_a_ceiling_raise_is_taken_by_the_tree_only_and_must_be_positive() -> None:
    raises = BudgetRaises()
    raises.raise_to(max_total_tokens=5000, max_steps=9)
    assert raises.take() == {"max_steps": 9}  # the root's checks leave the ceiling waiting
    assert raises.take(("max_total_tokens",)) == {"max_total_tokens": 5000}
    assert not raises.waiting
    with pytest.raises(ConfigError, match="max_total_tokens must be positive"):
        raises.raise_to(max_total_tokens=0)


async def test_a_tree_its_ceiling_stopped_resumes_once_the_ceiling_is_raised(
    project: Path, tmp_path: Path
) -> None:
    containment = Containment(
        max_total_agents=6, max_concurrent=2, max_depth=1, max_total_tokens=100
    )
    finish = ScriptedProvider(parse_scenario({"turns": [{"text": "All done."}]}))
    async with Store.open(tmp_path / "trace.db") as store:
        stopped = await run_tree(
            TaskContract.workspace("split", project, NoGate()),
            tree_model(6),
            store=store,
            containment=containment,
            policy=Policy.permissive(),
            sandbox=select("floor"),
        )
        with pytest.raises(ResumeError, match="must be higher"):
            await resume(stopped.run_id, finish, store=store, overrides={"max_total_tokens": 50})
        resumed = await resume(
            stopped.run_id,
            finish,
            store=store,
            overrides={"max_total_tokens": 10_000},
            sandbox=select("floor"),
        )
        stored = await store.run(stopped.run_id)
    assert (stopped.outcome, resumed.outcome) == ("cost_budget_exceeded", "finished")
    assert stored.contract["containment"]["max_total_tokens"] == 10_000

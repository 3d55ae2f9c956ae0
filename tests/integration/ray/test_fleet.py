"""A tree's children as Ray actors on two nodes, with the root's store the one source of truth.

One cluster and one fleet for the session (`conftest.py`): a head and a second node process, 2
CPUs each. One file, so that `pytest -n 2 --dist loadfile` starts the cluster once.

Workspaces: on one machine every node shares the filesystem, so the copy is forced
(`fleet.workspaces = "copy"`) with the same fleet.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
import ray

from ioh_tui.core.events import Event
from ioh_tui.engine import Containment, TaskContract
from ioh_tui.engine.api import start
from ioh_tui.engine.bus import Observer
from ioh_tui.engine.contract import RunResult
from ioh_tui.engine.request import NewRun, Parts
from ioh_tui.fleet.placement import RayFleet, connect
from ioh_tui.policy import Approver, Decision, Policy
from ioh_tui.policy.approver import WaitApprover
from ioh_tui.providers import ScriptedProvider
from ioh_tui.providers.testing.scenario import parse_scenario
from ioh_tui.sandbox import select
from ioh_tui.store import Store
from ioh_tui.verification import NoGate
from tests.integration.engine.helpers import Recorder
from tests.integration.engine.test_tree import tree_model
from tests.integration.ray.conftest import NODE_CPUS
from tests.snapshots.apps.fleet import writers_app
from tests.tui.harness import finished, modal, run_screen, until

# The session's fleet (`conftest.py`): every test runs in the session's loop.
pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="session")]

SLOW_CHILD = {
    "turns": [
        {
            "text": f"Reading, turn {i}.",
            "delay_ms": 60,
            "tool_calls": [{"name": "read_file", "arguments": {"path": "calc.py"}}],
            "usage": {"input_tokens": 100, "output_tokens": 20},
        }
        for i in range(4)
    ]
    + [{"text": "Child done.", "usage": {"input_tokens": 100, "output_tokens": 20}}]
}
WRITER = {
    "turns": [
        {
            "text": "Writing the notes.",
            "tool_calls": [
                {"name": "write_file", "arguments": {"path": "notes.txt", "content": "hi\n"}}
            ],
        },
        {"text": "Notes written."},
    ]
}


async def _tree(
    fleet: RayFleet,
    store: Store,
    project: Path,
    model: ScriptedProvider,
    containment: Containment,
    *,
    policy: Policy | None = None,
    approver: Approver | None = None,
    seen: Observer | None = None,
) -> RunResult:
    parts = Parts(
        model,
        store,
        policy=policy or Policy.permissive(),
        approver=approver,
        sandbox=select("floor"),
        observers=(seen or Recorder(),),
        fleet=fleet,
    )
    contract = TaskContract.workspace("split", project, NoGate())
    return await start(NewRun(contract, containment), parts)


def _alive() -> set[str]:
    return {n["NodeID"] for n in ray.nodes() if n["Alive"]}  # type: ignore[no-untyped-call]


async def test_40_children_run_as_actors_on_both_nodes_and_every_step_is_stored_once(
    fleet: RayFleet, project: Path
) -> None:
    seen = Recorder()
    async with Store.memory() as store:
        containment = Containment(max_total_agents=50, max_concurrent=4, max_depth=1)
        result = await _tree(fleet, store, project, tree_model(40), containment, seen=seen)
        children = await store.children(result.run_id)
        steps = {c.id: [s.step for s in await store.steps(c.id)] for c in children}
        calls = [c for c in await store.tool_calls(result.run_id) if c.name == "spawn_agent"]
        placed = {
            c.id: [(e.kind, e.detail) for e in await store.sandbox_events(c.id)] for c in children
        }
    assert (result.outcome, result.steps) == ("finished", 2)
    # Where each child ran is in its trace, as the fleet placed it.
    assert all(placed[c.id] == [("placed", f"on ray node {fleet.placed[c.id]}")] for c in children)
    assert len(children) == 40 and all(c.outcome == "finished" for c in children)
    assert all(taken == [1, 2] for taken in steps.values())
    alive = _alive()
    assert len(alive) == 2 and {fleet.placed[c.id] for c in children} == alive
    assert all("-> finished" in c.output and "Child done." in c.output for c in calls)
    # The children's events reached the root's bus (the app and `--json` see them).
    assert len(seen.of("agent_finished")) == 40
    child_steps = [e for e in seen.of("step_finished") if e.agent_id != result.run_id]
    assert len(child_steps) == 80


async def test_the_ledger_ceiling_halts_every_remote_agent(fleet: RayFleet, project: Path) -> None:
    async with Store.memory() as store:
        containment = Containment(
            max_total_agents=20, max_concurrent=4, max_depth=1, max_total_tokens=1500
        )
        model = tree_model(8, child=SLOW_CHILD)
        result = await _tree(fleet, store, project, model, containment)
        tree = await store.tree(result.run_id)
        spent = await store.tree_tokens(result.run_id)
    # Every agent that started halted on the one ledger; queued children never started.
    halted = {r.outcome for r in tree if r.parent_run_id is not None} | {result.outcome}
    assert halted == {"cost_budget_exceeded"} and len(tree) - 1 < 8
    assert {r.status for r in tree} == {"completed"}
    # Past the ceiling at most the steps in flight when it was reached (4 children's) and the
    # root's own spawning step (the ledger may also halt first, on a prompt that would not fit).
    assert 0 < spent <= 1500 + 4 * 120 + result.tokens


async def test_a_remote_childs_ask_is_answered_through_the_queue(
    fleet: RayFleet, project: Path
) -> None:
    model = ScriptedProvider(
        parse_scenario(
            {
                "turns": [
                    {"tool_calls": [{"name": "spawn_agent", "arguments": {"goal": "write notes"}}]},
                    {"text": "All done."},
                ],
                "agents": {"write notes": WRITER},
            }
        )
    )
    asked = asyncio.Event()
    async with Store.memory() as store:
        containment = Containment(max_total_agents=2, max_concurrent=1, max_depth=1)
        policy, approver = Policy.default(), WaitApprover()
        run = asyncio.ensure_future(
            _tree(
                fleet, store, project, model, containment,
                policy=policy, approver=approver, seen=_Flag(asked),
            )
        )  # fmt: skip
        await asyncio.wait_for(asked.wait(), 60)
        pending = await store.approvals(None, pending_only=True)
        # The queue answers in the store, as the app's queue and `resume --decide` do.
        assert await store.answer_approval(pending[0].id, Decision.approve().to_row(), by="queue")
        result = await run
        asker = await store.run(pending[0].run_id)
    assert result.outcome == "finished"
    # The child stopped waiting once the store had the answer; so did the root's approver.
    assert approver.waiting == 0
    assert asker.parent_run_id == result.run_id and asker.outcome == "finished"
    assert fleet.placed[asker.id] in _alive()
    assert (project / "notes.txt").read_text() == "hi\n"


async def test_a_worker_killed_mid_child_ends_as_an_undisturbed_run(
    fleet: RayFleet, project: Path
) -> None:
    containment = Containment(max_total_agents=8, max_concurrent=4, max_depth=1)
    restarts = fleet.restarts
    async with Store.memory() as calm:
        model = tree_model(4, child=SLOW_CHILD)
        undisturbed = await _tree(fleet, calm, project, model, containment)
        calm_tree = await _shape(calm, undisturbed.run_id)
        calm_calls = [c.output for c in await calm.tool_calls(undisturbed.run_id)]
    assert fleet.restarts == restarts
    seen = Recorder()
    async with Store.memory() as store:
        run = asyncio.ensure_future(
            _tree(fleet, store, project, tree_model(4, child=SLOW_CHILD), containment, seen=seen)
        )
        # Kill one child's worker process once that child has committed its second step.
        victim = None
        while victim is None:
            await asyncio.sleep(0.02)
            victim = next(
                (
                    e.agent_id
                    for e in seen.of("step_finished")
                    if e.step == 2 and e.agent_id in fleet.busy
                ),
                None,
            )
        os.kill(await fleet.busy[victim].pid.remote(), signal.SIGKILL)
        result = await run
        shaken_tree = await _shape(store, result.run_id)
        shaken_calls = [c.output for c in await store.tool_calls(result.run_id)]
        victim_steps = [s.step for s in await store.steps(victim)]
        victim_trace = [(e.kind, e.detail) for e in await store.sandbox_events(victim)]
    assert fleet.restarts > restarts
    # The victim's trace says where it ran, that its actor was lost, and where it went on.
    kinds = [kind for kind, _ in victim_trace]
    assert kinds[:3] == ["placed", "actor_lost", "placed"], victim_trace
    first_node = victim_trace[0][1].removeprefix("on ray node ")
    lost = rf"on ray node {first_node}: \w+Error: resumed from step \d+ on another actor"
    assert re.fullmatch(lost, victim_trace[1][1]), victim_trace
    assert shaken_calls == calm_calls
    assert (result.outcome, result.steps, result.tokens) == (
        undisturbed.outcome,
        undisturbed.steps,
        undisturbed.tokens,
    )
    assert shaken_tree == calm_tree
    assert victim_steps == list(range(1, len(victim_steps) + 1))


class _Flag:
    """An observer that sets `flag` at the first ask."""

    def __init__(self, flag: asyncio.Event) -> None:
        self.flag = flag

    def __call__(self, event: Event) -> None:
        if event.kind == "approval_requested":
            self.flag.set()


async def _shape(store: Store, root: int) -> tuple[Any, ...]:
    """What a run's outcome is made of: each agent's outcome, steps and tokens, and the ledger."""
    tree = await store.tree(root)
    agents = sorted((r.goal, r.outcome, r.steps, r.tokens) for r in tree)
    return (tuple(agents), await store.tree_tokens(root))


async def test_a_remote_child_spawns_through_the_root(fleet: RayFleet, project: Path) -> None:
    middle = {
        "turns": [
            {"tool_calls": [{"name": "spawn_agent", "arguments": {"goal": "leaf work"}}]},
            {"text": "Middle done."},
        ],
        "agents": {"leaf": {"turns": [{"text": "Leaf done."}]}},
    }
    model = ScriptedProvider(
        parse_scenario(
            {
                "turns": [
                    {
                        "tool_calls": [
                            {"name": "spawn_agent", "arguments": {"goal": f"middle {i}"}}
                            for i in range(2)
                        ]
                    },
                    {"text": "All done."},
                ],
                "agents": {"middle": middle},
            }
        )
    )
    async with Store.memory() as store:
        containment = Containment(max_total_agents=4, max_concurrent=2, max_depth=2)
        result = await _tree(fleet, store, project, model, containment)
        tree = await store.tree(result.run_id)
        middles = await store.children(result.run_id)
        leaf_reports = [
            c.output
            for m in middles
            for c in await store.tool_calls(m.id)
            if c.name == "spawn_agent"
        ]
    assert result.outcome == "finished"
    assert (
        sorted((r.depth, r.outcome) for r in tree)
        == [(0, "finished")] + [(1, "finished")] * 2 + [(2, "finished")] * 2
    )
    assert all("Leaf done." in r for r in leaf_reports) and len(leaf_reports) == 2
    assert all(fleet.placed[r.id] in _alive() for r in tree if r.depth > 0)


def _writer(path: str, text: str) -> dict[str, Any]:
    return {
        "turns": [
            {
                "delay_ms": 150,
                "tool_calls": [
                    {"name": "write_file", "arguments": {"path": path, "content": text}}
                ],
            },
            {"text": f"Wrote {path}."},
        ]
    }


# Each fixer's first command marks that its copy was taken (a child's copy is packed before its
# first turn) and waits for the other's mark, so both start from the same calc.py however slow
# the machine is: timing alone (a second, then three) lost this race on loaded CI machines.
_MEET = """
import os, sys, time
meeting, me, other = sys.argv[1:]
open(os.path.join(meeting, me), "w").close()
deadline = time.monotonic() + 120
while not os.path.exists(os.path.join(meeting, other)) and time.monotonic() < deadline:
    time.sleep(0.05)
"""


def _fixer(text: str, meeting: Path, me: str, other: str) -> dict[str, Any]:
    meet = [sys.executable, "-c", _MEET, str(meeting), me, other]
    return {
        "turns": [
            {"tool_calls": [{"name": "exec", "arguments": {"argv": meet}}]},
            {
                "tool_calls": [
                    {"name": "write_file", "arguments": {"path": "calc.py", "content": text}}
                ]
            },
            {"text": "Wrote calc.py."},
        ]
    }


# A command may write what the write tool may not: the root's check of the patch catches it.
SNEAK = {
    "turns": [
        {
            "tool_calls": [
                {
                    "name": "exec",
                    "arguments": {
                        "argv": [sys.executable, "-c", "open('secret.txt', 'w').write('x')"]
                    },
                }
            ]
        },
        {"text": "Ran it."},
    ]
}


def _tree_of(agents: dict[str, Any]) -> ScriptedProvider:
    spawns = [{"name": "spawn_agent", "arguments": {"goal": goal}} for goal in agents]
    scenario = {"turns": [{"tool_calls": spawns}, {"text": "All done."}], "agents": agents}
    return ScriptedProvider(parse_scenario(scenario))


async def _reports(fleet: RayFleet, project: Path, agents: dict[str, Any]) -> list[str]:
    """Run the tree; the reports the root read, in spawn order."""
    policy = Policy.permissive().layer("ops").deny_write("secret.txt")
    async with Store.memory() as store:
        parts = Parts(_tree_of(agents), store, policy=policy, sandbox=select("floor"), fleet=fleet)
        contract = TaskContract.workspace("split", project, NoGate())
        containment = Containment(max_total_agents=8, max_concurrent=4, max_depth=1)
        result = await start(NewRun(contract, containment), parts)
        assert result.outcome == "finished"
        return [c.output for c in await store.tool_calls(result.run_id)]


async def test_auto_finds_the_shared_workspace_and_children_write_in_it(
    fleet: RayFleet, project: Path
) -> None:
    reports = await _reports(fleet, project, {"notes": _writer("notes.txt", "hi\n")})
    assert (project / "notes.txt").read_text() == "hi\n"
    assert "[workspace copy" not in reports[0]
    assert fleet.workspaces == "auto"


async def test_a_copy_comes_back_as_a_patch_the_policy_and_the_base_check(
    fleet: RayFleet, project: Path
) -> None:
    # Commands run as an unprivileged user when the suite runs as root: a meeting place
    # anyone can write, removed with its marks.
    meeting = Path(tempfile.mkdtemp(prefix="ioh-meet-"))
    os.chmod(meeting, 0o777)
    fleet.workspaces = "copy"
    try:
        agents = {
            "notes": _writer("notes.txt", "notes\n"),
            "fix one": _fixer("def add(a, b):\n    return a + b\n", meeting, "one", "two"),
            "fix two": _fixer("def add(a, b):\n    return b + a\n", meeting, "two", "one"),
            "sneak": SNEAK,
        }
        reports = await _reports(fleet, project, agents)
    finally:
        fleet.workspaces = "auto"
        shutil.rmtree(meeting, ignore_errors=True)
    assert (project / "notes.txt").read_text() == "notes\n"
    assert "[workspace copy: 1 change(s) applied]" in reports[0]
    # Both fixes started from the same calc.py: the first back is applied, the other refused.
    fixes = reports[1:3]
    assert sum("1 change(s) applied]" in r for r in fixes) == 1
    assert sum("calc.py (changed meanwhile by another agent)" in r for r in fixes) == 1
    assert (project / "calc.py").read_text() in (
        "def add(a, b):\n    return a + b\n",
        "def add(a, b):\n    return b + a\n",
    )
    # The command wrote secret.txt in the copy; the root's policy check refused it.
    assert "secret.txt (the policy denies the write)" in reports[3]
    assert not (project / "secret.txt").exists()


SPLIT_TWO = {
    "turns": [
        {
            "tool_calls": [
                {"name": "spawn_agent", "arguments": {"goal": f"look {i}"}} for i in range(2)
            ]
        },
        {"text": "All done."},
    ],
    "agents": {"look": {"turns": [{"text": "Looked."}]}},
}


async def test_exec_with_ray_address_runs_the_tree_on_the_cluster(
    cluster: Any, project: Path, tmp_path: Path
) -> None:
    scenario = tmp_path / "s.json"
    scenario.write_text(json.dumps({"model": "m", **SPLIT_TWO}))
    store = tmp_path / "store.db"
    done = await asyncio.to_thread(
        subprocess.run,
        [
            sys.executable, "-m", "ioh_tui", "exec", "split", "--workspace", str(project),
            "--store", str(store), "--scenario", str(scenario), "--sandbox", "floor",
            "--max-agents", "2", "--json", "--ray", cluster.address,
        ],
        capture_output=True, text=True, timeout=90,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    finished = [e for e in events if e["event"] == "agent_finished"]
    assert [e["outcome"] for e in finished] == ["finished", "finished"]
    assert events[-1]["event"] == "run_finished" and events[-1]["outcome"] == "finished"


async def test_remote_children_call_the_roots_mcp_server(fleet: RayFleet, project: Path) -> None:
    """The server runs once, at the root; children on the nodes are offered its tools and
    resources, and their calls and reads are made there, decided by their own policy as for a
    local child."""
    from tests.integration.mcp.servers import gone, marker, stdio_spec

    tag = marker()
    note = {"server": "fx", "uri": "memo://notes/remote"}
    child = {
        "turns": [
            {"tool_calls": [{"name": "mcp__fx__echo", "arguments": {"text": "from a node"}}]},
            {"tool_calls": [{"name": "mcp_read_resource", "arguments": note}]},
            {"text": "Child done."},
        ]
    }
    model = tree_model(4, child=child)
    async with Store.memory() as store:
        parts = Parts(
            model,
            store,
            policy=Policy.permissive(),
            sandbox=select("floor"),
            fleet=fleet,
            mcp=(stdio_spec(tag=tag, resources=True),),
        )
        contract = TaskContract.workspace("split", project, NoGate())
        containment = Containment(max_total_agents=4, max_concurrent=4, max_depth=1)
        result = await start(NewRun(contract, containment), parts)
        children = await store.children(result.run_id)
        calls = [c for child in children for c in await store.tool_calls(child.id)]
    assert result.outcome == "finished" and len(children) == 4
    assert all(c.outcome == "finished" and c.id in fleet.placed for c in children)
    echoes = [c for c in calls if c.name == "mcp__fx__echo"]
    assert len(echoes) == 4 and all(c.ok and c.output == "echo: from a node" for c in echoes)
    reads = [c.output for c in calls if c.name == "mcp_read_resource"]
    assert reads == ["[resource memo://notes/remote]\nthe note called remote"] * 4
    # (A tool a child was not offered would be "[unknown tool ...]", not ok.)
    assert gone(tag), "the server outlived the tree"


async def test_the_app_shows_each_agents_node_and_the_cluster_and_asks_remote_writes(
    fleet: RayFleet, tmp_path: Path
) -> None:
    # Last in the file: the app lets go of the fleet when its run ends (its actors are ended).
    app = writers_app(tmp_path, 3, fleet=fleet)
    async with app.run_test(size=(160, 40)) as pilot:
        for _ in range(3):  # each remote child's write is asked in the app's modal
            await modal(pilot)
            await pilot.press("y")
        await finished(pilot)
        screen = run_screen(app)
        tree = screen.agent_tree
        await until(pilot, lambda: all(r.node for r in tree.rows.values()) and not tree._dirty)
        labels = {agent: str(node.label) for agent, node in tree.nodes_by_agent.items()}
        root, cluster = str(tree.root.label), screen.status.cluster
        status = str(screen.status.render())
    assert screen.outcome == "finished"
    census = fleet.census()
    assert census is not None and census.nodes == 2
    # Each child's line names the node it ran on; the root runs here.
    assert all(value for value in _named(labels, fleet, census.labels).values()), labels
    assert "root done @here ·" in root
    assert re.fullmatch(r"ray 2 nodes · [0-9.]+/4 CPUs free", cluster) and cluster in status
    assert sorted(p.name for p in (tmp_path / "project" / "notes").iterdir()) == [
        f"child{i}.md" for i in range(3)
    ]


def _named(labels: dict[int, str], fleet: RayFleet, nodes: Mapping[str, str]) -> dict[int, bool]:
    """Whether each agent's line names the node the fleet placed it on."""
    return {a: f" @{nodes[fleet.placed[a]]} · " in text for a, text in labels.items()}


async def test_a_node_lost_mid_child_ends_as_an_undisturbed_run(
    cluster: Any, project: Path
) -> None:
    # Last in the file: each lost node stays listed (dead) in the session's cluster.
    containment = Containment(max_total_agents=8, max_concurrent=4, max_depth=1)
    async with Store.memory() as calm:  # undisturbed, and in this process: the same outcome
        model = tree_model(4, child=SLOW_CHILD)
        undisturbed = await start(
            NewRun(TaskContract.workspace("split", project, NoGate()), containment),
            Parts(model, calm, policy=Policy.permissive(), sandbox=select("floor")),
        )
        calm_tree = await _shape(calm, undisturbed.run_id)
    restarts = 0
    # Under load the node can go just as its child's call returns, and then nothing is lost or
    # restarted: the outcome must still be the same, and another node is lost until one is.
    for _ in range(3):
        lost, result, shaken_tree = await _lose_a_node(cluster, project, containment)
        assert (result.outcome, result.steps, result.tokens) == (
            undisturbed.outcome,
            undisturbed.steps,
            undisturbed.tokens,
        )
        assert shaken_tree == calm_tree
        restarts += lost
        if restarts:
            break
    assert restarts > 0


async def _lose_a_node(
    cluster: Any, project: Path, containment: Containment
) -> tuple[int, RunResult, tuple[Any, ...]]:
    """A tree run whose third node is stopped once a child on it has committed a step.

    Returns:
        The children restarted on another node, the run's result and its tree's shape.
    """
    # Started here, not in a thread: Ray sets signal handlers as it starts a node.
    third = cluster.add_node(num_cpus=NODE_CPUS, node_ip_address="127.0.0.1")
    # A fleet of its own: its new actors spread over the three nodes, some on the one to lose.
    own = connect("auto", cpus_per_child=0.25)
    seen = Recorder()
    try:
        async with Store.memory() as store:
            model = tree_model(4, child=SLOW_CHILD)
            run = asyncio.ensure_future(_tree(own, store, project, model, containment, seen=seen))
            # Stop the node (its raylet and its workers) once a child on it has committed a step.
            while not any(
                e.agent_id in own.busy and own.placed.get(e.agent_id) == third.node_id
                for e in seen.of("step_finished")
            ):
                assert not run.done(), "no child was placed on the third node"
                await asyncio.sleep(0.02)
            cluster.remove_node(third, allow_graceful=False)
            result = await run
            return own.restarts, result, await _shape(store, result.run_id)
    finally:
        await own.close()

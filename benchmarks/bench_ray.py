"""A tree of 100 children x 10 steps, each model call taking 50 ms: in this process against Ray.

Ray runs on this machine as two node processes (a head and a second node, standing for two
machines; loopback only, no dashboard). The tree runs once in-process, then twice on Ray: the
first Ray run starts the actors (a worker process each), the second reuses them. Per-step
overhead is the extra wall time spread over the child steps one concurrency slot runs. Also the
requests children sent to the root (every store call, ask, ledger draw and event batch).

Prints figures; asserts nothing. Run it once: `python benchmarks/bench_ray.py`.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")  # loopback only

from ioh_tui.engine import Containment, TaskContract
from ioh_tui.engine.api import start
from ioh_tui.engine.request import NewRun, Parts
from ioh_tui.fleet.placement import RayFleet, connect
from ioh_tui.policy import Policy
from ioh_tui.providers import ScriptedProvider
from ioh_tui.providers.testing.scenario import parse_scenario
from ioh_tui.sandbox import select
from ioh_tui.store import Store
from ioh_tui.verification import NoGate

CHILDREN, STEPS, LATENCY_MS, CONCURRENT = 100, 10, 50, 8
NODE_CPUS = 4


def scenario() -> dict[str, object]:
    """bench_tree's shape at 50 ms a call: each child reads a file for 9 steps, then stops."""
    read = {"name": "read_file", "arguments": {"path": "a.txt"}}
    turns: list[dict[str, object]] = [
        {"delay_ms": LATENCY_MS, "text": f"step {n}", "tool_calls": [read]} for n in range(1, STEPS)
    ]
    turns.append({"delay_ms": LATENCY_MS, "text": "done"})
    goals = [f"worker {i}" for i in range(CHILDREN)]
    root = [
        {
            "tool_calls": [
                {"name": "spawn_agent", "arguments": {"goal": g, "max_steps": STEPS}} for g in goals
            ]
        },
        {"text": "all done"},
    ]
    return {"turns": root, "agents": {"worker": {"turns": turns}}}


async def one(root: Path, db: Path, fleet: RayFleet | None) -> float:
    provider = ScriptedProvider(parse_scenario(scenario()))
    async with Store.open(db) as store:
        parts = Parts(
            provider, store, policy=Policy.permissive(), sandbox=select("floor"), fleet=fleet
        )
        containment = Containment(max_total_agents=CHILDREN, max_concurrent=CONCURRENT, max_depth=1)
        started = time.perf_counter()
        result = await start(
            NewRun(TaskContract.workspace("bench", root, NoGate()), containment), parts
        )
        elapsed = time.perf_counter() - started
    assert result.outcome == "finished", result
    return elapsed


async def on_ray(root: Path, tmp: Path) -> tuple[float, float, int]:
    fleet = connect("auto")
    try:
        cold = await one(root, tmp / "cold.db", fleet)
        served = fleet.served
        warm = await one(root, tmp / "warm.db", fleet)
    finally:
        await fleet.close()
    return cold, warm, served


def main() -> None:
    import ray
    from ray.cluster_utils import Cluster

    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        root = tmp / "ws"
        root.mkdir()
        (root / "a.txt").write_text("x\n" * 10)
        local = asyncio.run(one(root, tmp / "local.db", None))
        node: dict[str, Any] = {"num_cpus": NODE_CPUS, "node_ip_address": "127.0.0.1"}
        started = time.perf_counter()
        cluster = Cluster(initialize_head=True, head_node_args={**node, "include_dashboard": False})
        cluster.add_node(**node)
        ray.init(address=cluster.address, log_to_driver=False, configure_logging=False)
        cluster.wait_for_nodes()
        up = time.perf_counter() - started
        try:
            cold, warm, served = asyncio.run(on_ray(root, tmp))
        finally:
            ray.shutdown()
            cluster.shutdown()  # type: ignore[no-untyped-call]
    steps = CHILDREN * STEPS
    per_slot = steps / CONCURRENT
    print(
        f"tree: {CHILDREN} children x {STEPS} steps, {LATENCY_MS} ms/call, max_concurrent {CONCURRENT}"
    )
    print(f"  in-process: wall {local:.2f} s")
    print(f"  ray, 2 node processes ({NODE_CPUS} CPUs each; cluster start {up:.1f} s):")
    print(f"    first run (starts {CONCURRENT} actors): wall {cold:.2f} s ({cold / local:.2f}x)")
    print(f"    second run (actors reused): wall {warm:.2f} s ({warm / local:.2f}x)")
    print(
        f"  overhead Ray adds per child step (second run): {(warm - local) / per_slot * 1000:.1f} ms"
        f"; requests to the root per child step: {served / steps:.1f}"
    )


if __name__ == "__main__":
    main()

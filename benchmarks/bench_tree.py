"""A tree of 100 children x 10 steps, each model call taking 10 ms: wall time and peak memory
against the ideal schedule (waves of `max_concurrent` children, each 10 steps x 10 ms).

Prints figures; asserts nothing. Children read a small file each step; the trace is on disk.
"""

from __future__ import annotations

import asyncio
import math
import resource
import tempfile
import time
from pathlib import Path

from ioh_tui.engine import Containment, TaskContract, run_tree
from ioh_tui.policy import Policy
from ioh_tui.providers import ScriptedProvider
from ioh_tui.providers.testing.scenario import parse_scenario
from ioh_tui.sandbox import select
from ioh_tui.store import Store
from ioh_tui.verification import NoGate

CHILDREN, STEPS, LATENCY_MS = 100, 10, 10


def scenario() -> dict[str, object]:
    step = {
        "delay_ms": LATENCY_MS,
        "tool_calls": [{"name": "read_file", "arguments": {"path": "a.txt"}}],
    }
    child = {"turns": [step] * (STEPS - 1) + [{"delay_ms": LATENCY_MS, "text": "done"}]}
    spawns = [
        {"name": "spawn_agent", "arguments": {"goal": f"worker {i}", "max_steps": STEPS}}
        for i in range(CHILDREN)
    ]
    return {"turns": [{"tool_calls": spawns}, {"text": "all done"}], "agents": {"worker": child}}


async def one(root: Path, db: Path, concurrent: int) -> float:
    provider = ScriptedProvider(parse_scenario(scenario()))
    async with Store.open(db) as store:
        started = time.perf_counter()
        result = await run_tree(
            TaskContract.workspace("bench", root, NoGate()),
            provider,
            store=store,
            containment=Containment(
                max_total_agents=CHILDREN, max_concurrent=concurrent, max_depth=1
            ),
            policy=Policy.permissive(),
            sandbox=select("floor"),
        )
        elapsed = time.perf_counter() - started
    assert result.outcome == "finished", result
    return elapsed


def main() -> None:
    """Print wall time vs the ideal schedule, and peak memory, for two concurrency caps."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        root.mkdir()
        (root / "a.txt").write_text("x\n" * 10)
        for concurrent in (16, 100):
            wall = asyncio.run(one(root, Path(tmp) / f"t{concurrent}.db", concurrent))
            ideal = math.ceil(CHILDREN / concurrent) * STEPS * LATENCY_MS / 1000
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
            print(
                f"tree: {CHILDREN} children x {STEPS} steps, {LATENCY_MS} ms/call, max_concurrent {concurrent}: "
                f"wall {wall:.2f} s vs ideal {ideal:.2f} s ({wall / ideal:.1f}x); "
                f"harness per child step {wall / (CHILDREN * STEPS) * 1000:.2f} ms; peak RSS {peak:.0f} MiB"
            )


if __name__ == "__main__":
    main()

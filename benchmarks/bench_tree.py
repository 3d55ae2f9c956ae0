"""A tree of 100 children x 10 steps, each model call taking 10 ms: wall time and peak memory
against a bare asyncio schedule of the same shape, measured in the same run (`max_concurrent`
tasks at a time through a semaphore, each 10 x `asyncio.sleep(0.01)`), and the ideal waves.

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
TABLE_CONCURRENCY = 10
"""The concurrency of issue 23's row."""


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


async def bare(concurrent: int) -> float:
    """The same schedule with nothing but sleeps: what asyncio alone costs for this shape."""
    slots = asyncio.Semaphore(concurrent)

    async def child() -> None:
        async with slots:
            for _ in range(STEPS):
                await asyncio.sleep(LATENCY_MS / 1000)

    started = time.perf_counter()
    await asyncio.gather(*(child() for _ in range(CHILDREN)))
    return time.perf_counter() - started


def main() -> None:
    """Print wall time vs the ideal schedule, and peak memory, for two concurrency caps."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        root.mkdir()
        (root / "a.txt").write_text("x\n" * 10)
        for concurrent in (TABLE_CONCURRENCY, 16, 100):
            wall = asyncio.run(one(root, Path(tmp) / f"t{concurrent}.db", concurrent))
            schedule = asyncio.run(bare(concurrent))
            ideal = math.ceil(CHILDREN / concurrent) * STEPS * LATENCY_MS / 1000
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
            print(
                f"tree: {CHILDREN} children x {STEPS} steps, {LATENCY_MS} ms/call, max_concurrent {concurrent}: "
                f"wall {wall:.2f} s vs bare schedule {schedule:.2f} s ({wall / schedule:.2f}x; ideal"
                f" {ideal:.2f} s); harness per child step {wall / (CHILDREN * STEPS) * 1000:.2f} ms;"
                f" peak RSS {peak:.0f} MiB"
            )
            if concurrent == TABLE_CONCURRENCY:
                print(
                    f"table | {CHILDREN} children x {STEPS} steps, {LATENCY_MS} ms a model call,"
                    f" concurrency {concurrent} | {wall / schedule:.2f}x ({wall:.2f} s vs"
                    f" {schedule:.2f} s) | a bare asyncio schedule of the same shape | ≤ 1.2x"
                )


if __name__ == "__main__":
    main()

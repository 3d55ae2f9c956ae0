"""Harness overhead per step: 200- and 1,000-step scripted runs with trivial tools, trace on disk.

Prints figures; asserts nothing. The model answers instantly, so wall time over steps is the
harness's own cost: building the request, dispatching a read, committing the step to SQLite.
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from ioh_tui.core.events import Event
from ioh_tui.engine import TaskContract, run
from ioh_tui.policy import Policy
from ioh_tui.providers import ScriptedProvider
from ioh_tui.providers.testing.scenario import parse_scenario
from ioh_tui.sandbox import select
from ioh_tui.store import Store
from ioh_tui.verification import NoGate


async def one_run(root: Path, db: Path, steps: int) -> tuple[float, int]:
    turn = {"text": "step", "tool_calls": [{"name": "read_file", "arguments": {"path": "a.txt"}}]}
    provider = ScriptedProvider(parse_scenario({"turns": [turn] * steps}))
    events = 0

    def count(_: Event) -> None:
        nonlocal events
        events += 1

    # The same read every step, on purpose: stall detection would end it at step 10.
    contract = (
        TaskContract.workspace("bench", root, NoGate()).with_max_steps(steps).with_stall_after(0)
    )
    async with Store.open(db) as store:
        started = time.perf_counter()
        result = await run(
            contract,
            provider,
            store=store,
            policy=Policy.permissive(),
            sandbox=select("floor"),
            observers=[count],
        )
        elapsed = time.perf_counter() - started
    assert result.steps == steps
    return elapsed, events


def main() -> None:
    """Print per-step figures: three 200-step runs, then one 1,000-step run."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        root.mkdir()
        (root / "a.txt").write_text("hello\n" * 20)
        for steps, runs in ((200, 3), (1000, 1)):
            per_step = []
            for i in range(runs):
                db = Path(tmp) / f"trace{steps}-{i}.db"
                elapsed, events = asyncio.run(one_run(root, db, steps))
                per_step.append(elapsed / steps * 1000)
            size = db.stat().st_size / 1024
            figures = ", ".join(f"{v:.2f}" for v in per_step)
            print(
                f"engine: {steps}-step run, trace {size:.0f} KiB, {events} events: harness overhead"
                f" per step median {statistics.median(per_step):.2f} ms (runs: {figures})"
            )


if __name__ == "__main__":
    main()

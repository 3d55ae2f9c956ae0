"""Harness overhead per step: a 200-step scripted run with trivial tools, the trace on disk.

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
from ioh_tui.providers.scenario import parse_scenario
from ioh_tui.sandbox import select
from ioh_tui.store import Store
from ioh_tui.verification import NoGate

STEPS = 200


async def one_run(root: Path, db: Path) -> tuple[float, int]:
    turn = {"text": "step", "tool_calls": [{"name": "read_file", "arguments": {"path": "a.txt"}}]}
    provider = ScriptedProvider(parse_scenario({"turns": [turn] * STEPS}))
    events = 0

    def count(_: Event) -> None:
        nonlocal events
        events += 1

    contract = TaskContract.workspace("bench", root, NoGate()).with_max_steps(STEPS)
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
    assert result.steps == STEPS
    return elapsed, events


def main() -> None:
    """Run three times and print per-step figures."""
    per_step = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        root.mkdir()
        (root / "a.txt").write_text("hello\n" * 20)
        for i in range(3):
            elapsed, events = asyncio.run(one_run(root, Path(tmp) / f"trace{i}.db"))
            per_step.append(elapsed / STEPS * 1000)
            size = (Path(tmp) / f"trace{i}.db").stat().st_size
    print(
        f"engine: {STEPS}-step scripted run, trace on disk ({size / 1024:.0f} KiB), {events} events"
    )
    print(
        f"engine: harness overhead per step: median {statistics.median(per_step):.2f} ms (runs: "
        + ", ".join(f"{v:.2f}" for v in per_step)
        + ")"
    )


if __name__ == "__main__":
    main()

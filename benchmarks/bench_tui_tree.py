"""Input-to-render latency while a scripted 100-agent tree runs in the app.

The root spawns CHILDREN sub-agents (MAX_CONCURRENT at a time); each reads a file a few times with
a short model delay, so the tree pane, the transcript and the ledger update throughout. While it
runs, the bench presses `tab` (focus moves between the transcript, the tree and the tool calls: a
visible change) every PRESS_GAP_S and times each press until the screen has handled it and
refreshed (`call_after_refresh`). The key is posted as a terminal's would be. Runs REPEATS times
(single runs vary by a third on a 2-core machine) and prints each run's p50 / p99 / max and their
medians; asserts nothing.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from textual import events

from ioh_tui.engine import Containment, TaskContract
from ioh_tui.policy import Policy
from ioh_tui.providers import ScriptedProvider
from ioh_tui.providers.scenario import parse_scenario
from ioh_tui.sandbox import select
from ioh_tui.tui.app import IohApp
from ioh_tui.tui.factory import make_app

CHILDREN = 100
MAX_CONCURRENT = 10
CHILD_TURNS = 4
DELAY_MS = 40
PRESS_GAP_S = 0.05
REPEATS = 3
USAGE = {"input_tokens": 500, "output_tokens": 40}


def tree_app(tmp: Path) -> IohApp:
    """The app over a scripted tree of CHILDREN children."""
    root = tmp / "ws"
    root.mkdir()
    (root / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    read = {"name": "read_file", "arguments": {"path": "calc.py"}}
    child: dict[str, Any] = {
        "turns": [{"text": "Looking.", "delay_ms": DELAY_MS, "tool_calls": [read], "usage": USAGE}]
        * (CHILD_TURNS - 1)
        + [{"text": "Done.", "usage": USAGE}]
    }
    spawns = [
        {"name": "spawn_agent", "arguments": {"goal": f"child task {i}"}} for i in range(CHILDREN)
    ]
    scenario = parse_scenario(
        {
            "model": "bench-tree",
            "turns": [
                {"text": "Splitting.", "tool_calls": spawns, "usage": USAGE},
                {"text": "All done.", "usage": USAGE},
            ],
            "agents": {"child task": child},
        }
    )
    app = make_app(
        tmp / "store.db",
        contract=TaskContract.workspace("split the work", root),
        provider=ScriptedProvider(scenario),
        policy=Policy.permissive(),
        sandbox=select("floor"),
        containment=Containment(
            max_total_agents=CHILDREN + 1,
            max_concurrent=MAX_CONCURRENT,
            max_depth=1,
            max_total_tokens=10_000_000,
        ),
        label="bench",
    )
    app.animation_level = "none"
    return app


async def measure(tmp: Path) -> tuple[list[float], float, int, int, str]:
    """Press keys while the tree runs; return latencies, run time, agents shown, redraws, outcome."""
    app = tree_app(tmp)
    latencies: list[float] = []
    missed = 0
    async with app.run_test(size=(160, 45)) as pilot:
        loop = asyncio.get_running_loop()
        started = time.perf_counter()
        await pilot.pause(0.05)
        while app.running or app.engine is None:
            refreshed: asyncio.Future[None] = loop.create_future()
            before = app.focused
            t0 = time.perf_counter()
            # As a terminal's key would arrive (Pilot.press waits for the whole app to go idle,
            # which a busy tree rarely does).
            app.post_message(events.Key("tab", None))
            while app.focused is before and time.perf_counter() - t0 < 2:  # noqa: ASYNC110
                await asyncio.sleep(0)
            if app.focused is before:
                missed += 1  # the press moved nothing (its widget was pruned away): not a latency
                continue
            app.screen.call_after_refresh(
                lambda f=refreshed: None if f.done() else f.set_result(None)
            )
            await refreshed
            latencies.append(time.perf_counter() - t0)
            await asyncio.sleep(PRESS_GAP_S)
        await app.workers.wait_for_complete()
        elapsed = time.perf_counter() - started
        screen = app.run_screen
        assert screen is not None
        await pilot.pause(0.2)
        tree = screen.agent_tree
        shown, redraws = len(tree.nodes_by_agent), tree.redraws
        outcome = app.result.outcome if app.result is not None else "?"
    if missed:
        print(f"presses that moved no focus (not counted): {missed}")
    return latencies, elapsed, shown, redraws, outcome


def percentile(values: list[float], q: float) -> float:
    """The q-quantile (nearest rank)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    runs: list[tuple[float, float, float, float]] = []
    for repeat in range(REPEATS):
        with tempfile.TemporaryDirectory(prefix="bench-tui-tree-") as tmp:
            latencies, elapsed, shown, redraws, outcome = asyncio.run(measure(Path(tmp)))
        ms = [v * 1000 for v in latencies]
        p50, p99, top = percentile(ms, 0.5), percentile(ms, 0.99), max(ms, default=0)
        runs.append((elapsed, p50, p99, top))
        print(
            f"run {repeat + 1}: {elapsed:.2f} s in the app ({outcome}; {shown} nodes shown,"
            f" {redraws} label redraws); key to render p50 {p50:.1f} ms, p99 {p99:.1f} ms,"
            f" max {top:.1f} ms ({len(ms)} presses, mean {statistics.fmean(ms) if ms else 0:.1f} ms)"
        )
    elapsed, p50, p99, top = (statistics.median(column) for column in zip(*runs, strict=True))
    print(f"agents:                 {CHILDREN} children, {MAX_CONCURRENT} at a time")
    print(f"run in the app:         {elapsed:.2f} s (median of {REPEATS})")
    print(
        f"key to render (tab):    p50 {p50:.1f} ms, p99 {p99:.1f} ms, max {top:.1f} ms"
        f" (medians of {REPEATS} runs)"
    )


if __name__ == "__main__":
    main()

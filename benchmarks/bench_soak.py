"""A long unattended run: thousands of steps, each reading a new 2 KB file, in a 16,000-token window.

Prints the prompt tokens of a few steps, the billed input tokens of a 1,500-step and a 3,000-step
run (their ratio: linear is about 2, quadratic 4), the largest request against the window, and the
process's peak RSS at a few points. Asserts nothing. `--steps N` runs one length only.
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import tempfile
import time
from pathlib import Path

from ioh_tui.core import events as ev
from ioh_tui.engine import NewRun, Parts, TaskContract, start
from ioh_tui.policy import Policy
from ioh_tui.providers import ScriptedProvider
from ioh_tui.providers.testing.scenario import parse_scenario
from ioh_tui.sandbox import select
from ioh_tui.store import Store
from ioh_tui.verification import NoGate

WINDOW = 16_000


def _peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def soak(root: Path, db: Path, steps: int, points: tuple[int, ...]) -> dict[str, float]:
    """One run of `steps` reads; the prompt sizes at `points` and the totals."""
    read = [
        {"tool_calls": [{"name": "read_file", "arguments": {"path": f"f{i:05d}.txt"}}]}
        for i in range(steps)
    ]
    provider = ScriptedProvider(parse_scenario({"turns": [*read, {"text": "done"}]}))
    prompts: dict[int, int] = {}
    rss: dict[int, float] = {}

    def observe(event: ev.Event) -> None:
        if isinstance(event, ev.StepFinished):
            # The double keeps every request it was sent (for tests); the harness's memory is
            # what is measured here, so that log is emptied as the run goes.
            provider.requests.clear()
        if isinstance(event, ev.UsageReported):
            prompts[event.step] = event.input_tokens
            if event.step in points:
                rss[event.step] = _peak_rss_mib()

    contract = (
        TaskContract.workspace("read every file", root, NoGate())
        .with_max_steps(steps + 1)
        .with_context_window(WINDOW)
    )
    async with Store.open(db) as store:
        started = time.perf_counter()
        result = await start(
            NewRun(contract),
            Parts(
                provider,
                store,
                policy=Policy.permissive(),
                sandbox=select("floor"),
                observers=(observe,),
            ),
        )
        elapsed = time.perf_counter() - started
    print(
        f"soak: {steps}-step run ended {result.outcome} after {result.steps} steps in "
        f"{elapsed:.0f} s; billed input {sum(prompts.values()):,} tokens; largest request "
        f"{max(prompts.values()):,} tokens of a {WINDOW:,}-token window"
    )
    shown = ", ".join(f"step {p}: {prompts.get(p, 0):,}" for p in points if p <= steps)
    print(f"soak: prompt tokens at {shown}")
    print("soak: peak RSS " + ", ".join(f"step {p}: {v:.0f} MiB" for p, v in sorted(rss.items())))
    late = max(v for s, v in prompts.items() if s > steps - 1000)
    mid = max(v for s, v in prompts.items() if steps // 6 <= s <= steps // 3)
    print(
        f"soak: largest prompt in the last 1,000 steps {late:,}; in steps {steps // 6}-{steps // 3}: {mid:,}"
    )
    return {"billed": float(sum(prompts.values()))}


def main() -> None:
    """Run 1,500 and 3,000 steps (or `--steps N`) and print the figures."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=None)
    args, _ = parser.parse_known_args()
    lengths = (args.steps,) if args.steps else (1500, 3000)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        root.mkdir()
        for i in range(max(lengths)):
            (root / f"f{i:05d}.txt").write_text(f"file {i}\n" + "0123456789abcdef " * 120)
        billed = []
        for steps in lengths:
            points = tuple(sorted({1, 100, 500, 1000, steps // 2, steps}))
            figures = asyncio.run(soak(root, Path(tmp) / f"soak{steps}.db", steps, points))
            billed.append(figures["billed"])
        if len(billed) == 2:
            print(f"soak: billed input, 3,000 steps over 1,500: {billed[1] / billed[0]:.2f}x")


if __name__ == "__main__":
    main()

"""Per-command overhead of each available sandbox backend against a bare subprocess.

Every variant runs `/bin/true` RUNS times in a fresh temporary directory (after WARMUP runs that
are not counted); the median and 90th percentile wall time per command are printed, with the
ratio of each median to the bare baseline. The baseline is `asyncio.create_subprocess_exec` plus
`wait()`, i.e. what running a command costs with no sandbox at all. Then the monitor's own cost:
the harness's CPU time (all its threads) while each rung runs `sleep 2`, as a share of one core.
It asserts nothing.

    .venv/bin/python benchmarks/bench_sandbox.py
"""

from __future__ import annotations

import asyncio
import statistics
import subprocess
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from ioh_tui.sandbox import BACKENDS, GATE_LIMITS, Sandbox, probe, select

RUNS = 30
WARMUP = 3
TRUE = "/bin/true"


async def _bare(cwd: Path) -> None:
    proc = await asyncio.create_subprocess_exec(
        TRUE, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    await proc.communicate()


async def _time(run: Callable[[], Awaitable[object]]) -> list[float]:
    for _ in range(WARMUP):
        await run()
    samples: list[float] = []
    for _ in range(RUNS):
        started = time.perf_counter()
        await run()
        samples.append((time.perf_counter() - started) * 1000.0)
    return samples


def _row(name: str, samples: list[float], baseline: float | None) -> str:
    median = statistics.median(samples)
    p90 = statistics.quantiles(samples, n=10)[-1]
    ratio = f"{median / baseline:6.1f}x" if baseline else "  1.0x"
    return f"{name:<22} {median:8.2f} ms {p90:8.2f} ms {ratio}"


def _runner(sandbox: Sandbox, cwd: Path) -> Callable[[], Awaitable[object]]:
    return lambda: sandbox.run([TRUE], cwd)


async def _main(cwd: Path) -> None:
    rungs = probe()
    print(f"available rungs: {', '.join(rungs)}; {RUNS} runs of {TRUE} each (after {WARMUP})")
    print(f"{'variant':<22} {'median':>11} {'p90':>11} {'ratio':>7}")
    baseline = statistics.median(bare := await _time(lambda: _bare(cwd)))
    print(_row("bare subprocess", bare, None))
    over: dict[str, float] = {}
    for rung in rungs:
        samples = await _time(_runner(select(rung), cwd))
        print(_row(BACKENDS[rung], samples, baseline))
        over[rung] = statistics.median(samples) - baseline
    if "bwrap" in over or "namespaces" in over:
        print(
            f"table | sandbox overhead per command (`{TRUE}`) | bubblewrap"
            f" {over.get('bwrap', float('nan')):.1f} ms, namespaces"
            f" {over.get('namespaces', float('nan')):.1f} ms over bare | a bare subprocess"
            f" ({baseline:.1f} ms) | bubblewrap ≤ 8 ms, namespaces ≤ 15 ms"
        )
    floor = select("floor")
    gated = await _time(lambda: floor.run([TRUE], cwd, limits=GATE_LIMITS))
    print(_row("portable-floor + caps", gated, baseline))
    shares = {}
    for rung in rungs:
        shares[rung] = share = await monitor_share(select(rung), cwd)
        print(
            f"monitor while `sleep {SLEEP_S:g}` runs, {BACKENDS[rung]:<18} {share:5.1%} of a core"
        )
    figures = ", ".join(f"{BACKENDS[r]} {v:.1%}" for r, v in shares.items())
    print(
        f"table | the sandbox monitor while a command sleeps | {figures} of a core | nothing | ≤ 2%"
    )


SLEEP_S = 2.0


async def monitor_share(sandbox: Sandbox, cwd: Path) -> float:
    """The harness's CPU time over one second in the middle of a sleeping command, with caps.

    The middle second leaves out the launch and the teardown: what is left is the monitor.
    """
    run = asyncio.create_task(sandbox.run(["sleep", f"{SLEEP_S:g}"], cwd, limits=GATE_LIMITS))
    await asyncio.sleep(0.5)
    cpu = time.process_time()
    started = time.perf_counter()
    await asyncio.sleep(1.0)
    share = (time.process_time() - cpu) / (time.perf_counter() - started)
    await run
    return share


def main() -> None:
    """Print the overhead table."""
    with tempfile.TemporaryDirectory(prefix="ioh-bench-") as tmp:
        asyncio.run(_main(Path(tmp)))


if __name__ == "__main__":
    main()

"""Per-command overhead of each available sandbox backend against a bare subprocess.

Every variant runs `/bin/true` RUNS times in a fresh temporary directory (after WARMUP runs that
are not counted); the median and 90th percentile wall time per command are printed, with the
ratio of each median to the bare baseline. The baseline is `asyncio.create_subprocess_exec` plus
`wait()`, i.e. what running a command costs with no sandbox at all. It asserts nothing.

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
    for rung in rungs:
        samples = await _time(_runner(select(rung), cwd))
        print(_row(BACKENDS[rung], samples, baseline))
    floor = select("floor")
    gated = await _time(lambda: floor.run([TRUE], cwd, limits=GATE_LIMITS))
    print(_row("portable-floor + caps", gated, baseline))


def main() -> None:
    """Print the overhead table."""
    with tempfile.TemporaryDirectory(prefix="ioh-bench-") as tmp:
        asyncio.run(_main(Path(tmp)))


if __name__ == "__main__":
    main()

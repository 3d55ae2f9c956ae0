"""How long each rung takes to tear down a 1,023-process tree after its wall cap fires.

The command forks a binary tree ten levels deep (1,023 processes, each then sleeping) and prints
`ready` once every process exists; the wall cap is WALL_S. The figure printed is what `run` took
beyond the cap: teardown (kill, reap, drain). It asserts nothing.

    .venv/bin/python benchmarks/bench_sandbox_teardown.py [rung ...]
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from pathlib import Path

from ioh_tui.sandbox import BACKENDS, Limits, probe, select

WALL_S = 3.0
DEPTH = 10
"""2**DEPTH - 1 processes."""

TREE = """
import os, sys, time
depth = int(sys.argv[1])
for level in range(depth - 1):
    if os.fork() == 0:       # the child goes on down the left branch...
        continue
    if os.fork() == 0:       # ...and a second child down the right one
        continue
    break
time.sleep(600)
"""


async def _one(rung: str, cwd: Path) -> tuple[float, str | None]:
    sandbox = select(rung)
    started = time.monotonic()
    result = await sandbox.run(
        [sys.executable, "-c", TREE, str(DEPTH)],
        cwd,
        limits=Limits(wall_s=WALL_S, memory_mb=None),
    )
    return time.monotonic() - started - WALL_S, result.cap_hit


async def _main(rungs: list[str], cwd: Path) -> None:
    print(f"{2**DEPTH - 1}-process tree, wall cap {WALL_S:.0f} s; seconds beyond the cap")
    for rung in rungs:
        beyond, cap = await _one(rung, cwd)
        print(f"{BACKENDS[rung]:<18} {beyond:7.2f} s  (cap_hit={cap})")


def main() -> None:
    """Print the teardown table."""
    rungs = sys.argv[1:] or probe()
    with tempfile.TemporaryDirectory(prefix="ioh-bench-") as tmp:
        asyncio.run(_main(rungs, Path(tmp)))


if __name__ == "__main__":
    main()

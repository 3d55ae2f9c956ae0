"""Issue 18 item 6: teardown is linear in the tree, not quadratic.

A 1,023-process tree took 7-98 s beyond its cap before (every rung); about 1 s now. The figures
come from benchmarks/bench_sandbox_teardown.py; this test asserts a generous bound only.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from ioh_tui.sandbox import Limits, select

from .conftest import PY, live_with, token

FORK_TREE = """
import os, sys, time
depth = int(sys.argv[1])
for level in range(depth - 1):
    if os.fork() == 0:
        continue
    if os.fork() == 0:
        continue
    break
else:
    print("leaf", flush=True)  # only the 2**(depth-1) leaves finish the loop
time.sleep(600)
"""
"""A binary tree of 2**depth - 1 forked (not exec'd) processes, each sleeping."""

GENEROUS_S = 6.0
"""Six times the ~1 s measured here; the quadratic sweep took 7.5 s (floor) to 98 s (bwrap)."""


@pytest.mark.slow
async def test_a_thousand_process_tree_is_torn_down_promptly(
    any_rung: str, workspace: Path
) -> None:
    marker = token()
    started = time.monotonic()
    result = await select(any_rung).run(
        [PY, "-c", FORK_TREE, "10", marker], workspace, limits=Limits(wall_s=2)
    )
    beyond = time.monotonic() - started - 2
    assert result.cap_hit == "wall"
    assert result.stdout.count("leaf") >= 256  # the tree really grew before the cap
    assert beyond < GENEROUS_S, f"teardown took {beyond:.1f} s beyond the cap"
    assert live_with(marker) == []

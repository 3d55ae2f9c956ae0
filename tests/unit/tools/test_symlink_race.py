"""A folder flipped between a real directory and a symlink out, while the file tools work in it.

Another process swaps `work/` for a symlink to a directory outside the workspace and back, as fast
as it can, while write_file, read_file, edit_file, grep, find and list_dir run hundreds of times
on paths through it. Nothing may land outside and nothing outside may be read: every tool walks
the path through directory descriptors and uses what it checked (issue 18, item 1).
"""

from __future__ import annotations

import multiprocessing
import os
import random
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from ioh_tui.tools import WORKSPACE_TOOLS, ToolSet
from tests.unit.tools.context import context

SECRET = "OUTSIDE-SECRET-7c1f"
ROUNDS = 300


def _flip(work: Path, outside: Path, stop: multiprocessing.synchronize.Event) -> None:
    """Swap `work` between a real directory and a symlink to `outside` until told to stop."""
    parked = work.with_name("parked")
    strays = 0
    while not stop.is_set():
        try:
            if parked.exists():  # a write recreated `work` while it was parked: set it aside
                if work.is_symlink():
                    work.unlink()
                elif work.exists():
                    strays += 1
                    os.rename(work, work.with_name(f"stray-{strays}"))
                os.rename(parked, work)
            os.rename(work, parked)
            os.symlink(outside, work)
            time.sleep(random.uniform(0, 0.0003))
            os.unlink(work)
            os.rename(parked, work)
            time.sleep(random.uniform(0, 0.0003))
        except OSError:
            continue


@pytest.fixture
def swapping(tmp_path: Path) -> tuple[Path, Path, multiprocessing.synchronize.Event]:
    root = tmp_path / "ws"
    (root / "work").mkdir(parents=True)
    (root / "work" / "note.txt").write_text("inside note\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "note.txt").write_text(f"{SECRET}\n")
    (outside / "only-outside.txt").write_text(f"{SECRET}\n")
    return root, outside, multiprocessing.get_context("fork").Event()


def _outside_untouched(outside: Path) -> None:
    assert sorted(p.name for p in outside.iterdir()) == ["note.txt", "only-outside.txt"]
    assert (outside / "note.txt").read_text() == f"{SECRET}\n"


def _writes(i: int) -> list[tuple[str, dict[str, object]]]:
    return [
        ("write_file", {"path": "work/note.txt", "content": f"inside {i}\n"}),
        ("write_file", {"path": f"work/new-{i}.txt", "content": "planted\n"}),
        ("edit_file", {"path": "work/note.txt", "old_text": "inside", "new_text": "in"}),
    ]


def _reads(i: int) -> list[tuple[str, dict[str, object]]]:
    return [
        ("read_file", {"path": "work/note.txt"}),
        ("read_file", {"path": "work/only-outside.txt"}),
        ("grep", {"pattern": SECRET[9:]}),
        ("grep", {"pattern": SECRET[9:], "path": "work"}),
        ("grep", {"pattern": SECRET[9:], "path": "work/note.txt"}),
        ("list_dir", {"path": "work"}),
        ("find", {"pattern": "*.txt"}),
    ]


@pytest.mark.parametrize("calls", [_writes, _reads], ids=["writes", "reads"])
async def test_no_tool_crosses_a_directory_swapped_for_a_symlink_out(
    swapping: tuple[Path, Path, multiprocessing.synchronize.Event],
    calls: Callable[[int], list[tuple[str, dict[str, object]]]],
) -> None:
    root, outside, stop = swapping
    ctx = context(root)
    tools = ToolSet(WORKSPACE_TOOLS)
    flipper = multiprocessing.get_context("fork").Process(
        target=_flip, args=(root / "work", outside, stop)
    )
    flipper.start()
    seen: list[str] = []
    try:
        for i in range(ROUNDS):
            for name, args in calls(i):
                seen.append((await tools.dispatch(name, args, ctx)).output)
    finally:
        stop.set()
        flipper.join(10)
    _outside_untouched(outside)
    assert [output for output in seen if SECRET in output] == []
    listed = [line for output in seen for line in output.splitlines()]
    assert [line for line in listed if line.startswith(("work/only", "file only"))] == []

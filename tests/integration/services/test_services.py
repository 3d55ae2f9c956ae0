"""The workspace watcher sees real file changes with their diffs; metrics see real processes."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

from ioh_tui.services import FileChange, WorkspaceWatcher, sample_processes


async def test_the_watcher_reports_changes_with_diffs_and_skips_tool_dirs(tmp_path: Path) -> None:
    (tmp_path / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (tmp_path / "gone.txt").write_text("bye\n")
    (tmp_path / "node_modules").mkdir()
    watcher = WorkspaceWatcher(tmp_path)
    stop = asyncio.Event()
    seen: dict[str, FileChange] = {}

    async def collect() -> None:
        async for batch in watcher.changes(stop):
            for change in batch:
                seen[change.path] = change
            if {"calc.py", "new.txt", "gone.txt"} <= seen.keys():
                stop.set()

    task = asyncio.create_task(collect())
    await asyncio.sleep(0.3)  # let the watcher take its baseline and start watching
    (tmp_path / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (tmp_path / "new.txt").write_text("hello\n")
    (tmp_path / "gone.txt").unlink()
    (tmp_path / "node_modules" / "x.js").write_text("ignored\n")
    await asyncio.wait_for(task, 10)
    assert seen["calc.py"].kind == "modified"
    assert (
        "-    return a - b" in seen["calc.py"].diff and "+    return a + b" in seen["calc.py"].diff
    )
    assert seen["new.txt"].kind == "created" and "+hello" in seen["new.txt"].diff
    assert seen["gone.txt"].kind == "deleted"
    assert not any(p.startswith("node_modules") for p in seen)


def test_metrics_see_a_busy_child_process() -> None:
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        samples = sample_processes(interval_s=0.3)
    finally:
        busy.kill()
        busy.wait()
    (mine,) = [s for s in samples if s.pid == busy.pid]
    # A spinning loop gets a core when the machine is idle; far less while other tests load it.
    assert mine.cpu_percent > 5 and mine.rss_mb > 1 and "while True" in mine.command


async def test_a_file_put_back_is_reported_unchanged_and_stopping_makes_a_last_pass(
    tmp_path: Path,
) -> None:
    (tmp_path / "calc.py").write_text("a - b\n")
    (tmp_path / "logo.bin").write_bytes(b"\xff\x00" * 10)
    watcher = WorkspaceWatcher(tmp_path)
    stop = asyncio.Event()
    batches: list[list[FileChange]] = []
    arrived: asyncio.Queue[None] = asyncio.Queue()

    async def collect() -> None:
        async for batch in watcher.changes(stop):
            batches.append(batch)
            arrived.put_nowait(None)

    def kinds() -> dict[str, str]:
        return {c.path: c.kind for batch in batches for c in batch}

    async def reported(path: str, kind: str) -> None:
        async with asyncio.timeout(10):
            while kinds().get(path) != kind:
                await arrived.get()

    task = asyncio.create_task(collect())
    await asyncio.sleep(0.3)  # let the watcher take its baseline
    (tmp_path / "calc.py").write_text("a + b\n")
    await reported("calc.py", "modified")
    (tmp_path / "calc.py").write_text("a - b\n")
    await reported("calc.py", "unchanged")
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "__pycache__" / "calc.cpython-311.pyc").write_bytes(b"\x00bytecode")
    (tmp_path / "late.txt").write_text("just before the end\n")
    stop.set()  # inside the debounce window: only the last pass can see it
    await asyncio.wait_for(task, 10)
    assert kinds()["late.txt"] == "created"
    assert "logo.bin" not in kinds()  # an untouched binary file is not a change
    assert not any(path.startswith("__pycache__") for path in kinds())  # bytecode is noise

"""The monitor reads each process once a sample and samples a quiet command less often."""

from __future__ import annotations

import subprocess
from pathlib import Path

import psutil
import pytest

from ioh_tui.sandbox import Limits, _tree, select
from ioh_tui.sandbox._tree import ProcessTree, _scan_pid

from .conftest import PY, script

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")


def test_one_read_of_stat_gives_what_psutil_reads_from_three_files() -> None:
    busy = 'x = [b"x" * (1 << 20) for _ in range(40)]; sum(range(3_000_000)); print(); input()'
    child = subprocess.Popen(
        [PY, "-c", busy], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None
        child.stdout.readline()  # allocated and busy: now it waits, so nothing moves
        row = _scan_pid(child.pid)
        proc = psutil.Process(child.pid)
        rss, times = proc.memory_info().rss, proc.cpu_times()
        assert row is not None and row.usage is not None
        # The kernel's RSS counters are cached per CPU: two reads may differ by a few pages.
        assert row.usage[0] == pytest.approx(rss, rel=0.02)
        cpu = times.user + times.system + times.children_user + times.children_system
        assert row.usage[1] == pytest.approx(cpu, abs=0.02)
        assert cpu > 0.05 and rss > 40 << 20  # the figures compared are not zeros
    finally:
        child.kill()
        child.wait()


async def test_a_sleeping_command_is_sampled_less_often(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    samples = 0
    measure = ProcessTree.measure

    def counted(tree: ProcessTree) -> tuple[int, float, int]:
        nonlocal samples
        samples += 1
        return measure(tree)

    monkeypatch.setattr(ProcessTree, "measure", counted)
    result = await select("floor").run(["sleep", "2"], workspace, limits=Limits(wall_s=20))
    assert result.exit_code == 0
    # Every 40 ms would be about 50 samples; doubling to 320 ms while quiet makes about 10.
    assert samples < 20


async def test_a_command_that_wakes_after_a_quiet_spell_is_still_capped(workspace: Path) -> None:
    wake_and_grow = """
        import time
        time.sleep(1.5)
        chunks = []
        while True:
            chunks.append(b"x" * (1 << 20))
    """
    result = await select("floor").run(
        script(wake_and_grow), workspace, limits=Limits(memory_mb=64, wall_s=20)
    )
    assert result.cap_hit == "memory"


def test_a_sample_reads_the_trees_own_processes_and_finds_what_the_whole_table_finds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A child started from a second thread (listed in that thread's `children` file), and a
    # grandchild under a child.
    program = f"""
import subprocess, threading, time
started = threading.Event()
def spawn():
    subprocess.Popen(["sleep", "30"])
    started.set()
    time.sleep(30)  # alive: its child is listed in this thread's file, not the main thread's
threading.Thread(target=spawn, daemon=True).start()
started.wait()
inner = "import subprocess; subprocess.Popen(['sleep', '30']); print(flush=True); input()"
child = subprocess.Popen([{PY!r}, "-c", inner], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
child.stdout.readline()
print(flush=True)
time.sleep(30)
"""
    leader = subprocess.Popen([PY, "-c", program], stdout=subprocess.PIPE, text=True)
    try:
        assert leader.stdout is not None
        leader.stdout.readline()  # every process has started (Popen returns after the exec)
        tree = ProcessTree(leader.pid, None)
        assert _tree._CHILDREN  # the kernel lists children here: the path tested is that one
        expected = 4  # the leader, the thread's sleep, the child and its sleep
        monkeypatch.setattr(_tree, "_scan", lambda: pytest.fail("read the whole table"))
        rss, _, count = tree.measure()
        assert count == expected and rss > 0
        monkeypatch.undo()
        monkeypatch.setattr(_tree, "_CHILDREN", False)
        assert tree.measure()[2] == expected  # the whole table's walk agrees
        # A tree past TREE_SCAN_MAX is sampled from the whole table (two reads a process cost
        # more than one read of every process): made to look that large here.
        monkeypatch.setattr(_tree, "_CHILDREN", True)
        monkeypatch.setattr(_tree, "TREE_SCAN_MAX", expected - 1)
        monkeypatch.setattr(_tree, "_scan_tree", lambda roots: pytest.fail("read the tree"))
        assert tree.measure()[2] == expected
    finally:
        ProcessTree(leader.pid, None).kill_all()
        leader.wait()

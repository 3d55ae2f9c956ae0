"""Nothing a command starts outlives it: normal exit, cap, cancellation, exception."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import psutil
import pytest

from ioh_tui.sandbox import Limits, _tree, select

from .conftest import TREE, TREE_SIZE, live_with, script, sleepers, token


def _tree_argv(marker: str, pids: Path, mode: str) -> list[str]:
    return [*script(TREE), marker, str(pids), mode]


def _assert_gone(marker: str, pids: Path, rung: str) -> None:
    assert live_with(marker) == []
    if rung in ("floor", "none"):
        # Without a PID namespace the pids the children wrote are host pids: check them directly.
        for pid in map(int, pids.read_text().split()):
            try:
                status = psutil.Process(pid).status()
            except psutil.NoSuchProcess:
                continue
            assert status == psutil.STATUS_ZOMBIE, f"pid {pid} survived"


@pytest.mark.parametrize("mode", ["exit", "hang"])
async def test_daemons_and_forked_children_die_with_the_command(
    any_rung: str, workspace: Path, mode: str
) -> None:
    marker = token()
    pids = workspace / "pids"
    seen_alive: list[int] = []

    def on_output(text: str) -> None:
        if "ready" in text:
            seen_alive.append(len(sleepers(marker)))
            (workspace / "go").touch()

    result = await select(any_rung).run(
        _tree_argv(marker, pids, mode), workspace, limits=Limits(wall_s=2), on_output=on_output
    )
    assert "ready" in result.stdout, result.stderr
    assert seen_alive == [TREE_SIZE]  # the test is meaningful: the whole tree was running
    assert result.cap_hit == (None if mode == "exit" else "wall")
    _assert_gone(marker, pids, any_rung)


async def test_cancelling_the_awaiting_task_kills_the_tree(any_rung: str, workspace: Path) -> None:
    marker = token()
    pids = workspace / "pids"
    ready = asyncio.Event()

    def on_output(text: str) -> None:
        if "ready" in text:
            ready.set()

    task = asyncio.create_task(
        select(any_rung).run(
            _tree_argv(marker, pids, "hang"),
            workspace,
            limits=Limits(wall_s=30),
            on_output=on_output,
        )
    )
    await asyncio.wait_for(ready.wait(), timeout=20)
    assert len(sleepers(marker)) == TREE_SIZE
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    _assert_gone(marker, pids, any_rung)


async def test_an_exception_in_the_caller_kills_the_tree(any_rung: str, workspace: Path) -> None:
    marker = token()
    pids = workspace / "pids"

    class Stop(Exception):
        pass

    async def run_then_fail() -> None:
        ready = asyncio.Event()
        running = asyncio.create_task(
            select(any_rung).run(
                _tree_argv(marker, pids, "hang"),
                workspace,
                limits=Limits(wall_s=30),
                on_output=lambda text: ready.set() if "ready" in text else None,
            )
        )
        try:
            await asyncio.wait_for(ready.wait(), timeout=20)
            raise Stop
        finally:
            running.cancel()
            await asyncio.gather(running, return_exceptions=True)

    with pytest.raises(Stop):
        await run_then_fail()
    _assert_gone(marker, pids, any_rung)


async def test_cap_kill_takes_the_tree(any_rung: str, workspace: Path) -> None:
    marker = token()
    pids = workspace / "pids"
    result = await select(any_rung).run(
        _tree_argv(marker, pids, "hang"), workspace, limits=Limits(output_bytes=3, wall_s=20)
    )
    assert result.cap_hit == "output"
    assert result.stdout == "rea"
    _assert_gone(marker, pids, any_rung)


async def test_only_a_rung_without_a_pid_namespace_reads_the_whole_process_table(
    any_rung: str, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Under a PID namespace nothing can leave the tree, so the teardown walks the tree's own
    # processes (issue 23: the whole table was 4-7 ms of every command); the floor and `none`
    # must still read it all, to find a marked daemon that left.
    scans: list[int] = []
    whole = _tree._scan

    def counted() -> dict[int, _tree._Row]:
        table = whole()
        scans.append(len(table))
        return table

    monkeypatch.setattr(_tree, "_scan", counted)
    marker = token()
    pids = workspace / "pids"

    def on_output(text: str) -> None:
        if "ready" in text:
            (workspace / "go").touch()

    argv = _tree_argv(marker, pids, "exit")
    result = await select(any_rung).run(argv, workspace, on_output=on_output)
    assert result.exit_code == 0
    _assert_gone(marker, pids, any_rung)
    if any_rung in ("bwrap", "namespaces"):
        assert scans == []
    else:
        assert scans


async def test_no_zombie_or_fd_leak_across_many_runs(workspace: Path) -> None:
    sandbox = select("floor")
    me = psutil.Process()
    before = me.num_fds()
    for _ in range(20):
        assert (await sandbox.run(["true"], workspace)).exit_code == 0
    assert me.num_fds() <= before + 2
    zombies = [c for c in me.children() if c.status() == psutil.STATUS_ZOMBIE]
    assert zombies == []
    assert os.getpid() == me.pid


REPO = str(Path(__file__).resolve().parents[3])

HARNESS = """
import asyncio, sys
from pathlib import Path
from ioh_tui.sandbox import Limits, _tree, select

async def main() -> None:
    rung, workspace, argv = sys.argv[1], Path(sys.argv[2]), sys.argv[3:]
    def tail(text: str) -> None:
        print(text, end="", flush=True)
    await select(rung).run(argv, workspace, limits=Limits(wall_s=60), on_output=tail)

asyncio.run(main())
"""


async def test_harness_death_takes_the_namespace_down(rung: str, workspace: Path) -> None:
    if rung == "floor":
        pytest.skip("without a PID namespace only the leader gets the parent-death signal")
    marker = token()
    pids = workspace / "pids"
    harness = await asyncio.create_subprocess_exec(
        *script(HARNESS),
        rung,
        str(workspace),
        *_tree_argv(marker, pids, "hang"),
        stdout=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": REPO},
    )
    assert harness.stdout is not None
    line = await asyncio.wait_for(harness.stdout.readline(), timeout=20)
    assert line == b"ready\n"
    assert len(sleepers(marker)) == TREE_SIZE
    harness.kill()  # SIGKILL: no cleanup code of ours runs
    await harness.wait()
    for _ in range(100):
        if not live_with(marker):
            break
        await asyncio.sleep(0.02)
    assert live_with(marker) == []

"""Caps kill (never throttle) and come back as typed results, on every available rung."""

from __future__ import annotations

import signal
import time
from pathlib import Path

from ioh_tui.sandbox import Limits, select

from .conftest import script

GROW = """
chunks = []
while True:
    chunks.append(b"x" * (1 << 20))   # touched pages: RSS grows 1 MiB per step
"""


async def test_memory_bomb_is_killed(any_rung: str, workspace: Path) -> None:
    result = await select(any_rung).run(
        script(GROW), workspace, limits=Limits(memory_mb=64, wall_s=20)
    )
    assert result.cap_hit == "memory"
    assert result.exit_code is None
    assert result.duration_ms < 10_000


async def test_staying_under_the_caps_runs_to_completion(any_rung: str, workspace: Path) -> None:
    # ~30 MiB touched under a 64 MiB cap; wrapper processes (bwrap, unshare, the launcher) do not
    # count against the command's memory.
    result = await select(any_rung).run(
        script("buf = b'x' * (30 << 20); print(len(buf))"),
        workspace,
        limits=Limits(memory_mb=64, cpu_s=5, wall_s=20),
    )
    assert (result.exit_code, result.cap_hit, result.stdout) == (0, None, f"{30 << 20}\n")


async def test_one_huge_allocation_hits_the_address_space_backstop(
    any_rung: str, workspace: Path
) -> None:
    if any_rung == "none":
        return  # no rlimits without containment; the RSS monitor cannot see a failed malloc
    result = await select(any_rung).run(
        script("buf = bytearray(4 << 30)"), workspace, limits=Limits(memory_mb=64, wall_s=20)
    )
    assert "MemoryError" in result.stderr
    assert result.cap_hit == "memory"
    assert result.exit_code is None


async def test_infinite_loop_is_stopped_by_cpu_cap(any_rung: str, workspace: Path) -> None:
    started = time.monotonic()
    result = await select(any_rung).run(
        script("while True: pass"), workspace, limits=Limits(cpu_s=1, wall_s=8)
    )
    assert result.cap_hit == "cpu"
    assert result.exit_code is None
    assert time.monotonic() - started < 7


async def test_cpu_cap_counts_the_whole_tree(any_rung: str, workspace: Path) -> None:
    # Two busy children, each under the per-process RLIMIT_CPU of 2 s: only the tree sum trips.
    busy = """
    import subprocess, sys
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    for p in procs:
        p.wait()
    """
    result = await select(any_rung).run(
        script(busy), workspace, limits=Limits(cpu_s=1.5, wall_s=10)
    )
    assert result.cap_hit == "cpu"


async def test_sleep_is_stopped_at_the_wall(any_rung: str, workspace: Path) -> None:
    started = time.monotonic()
    result = await select(any_rung).run(["sleep", "30"], workspace, limits=Limits(wall_s=1))
    elapsed = time.monotonic() - started
    assert result.cap_hit == "wall"
    assert result.exit_code is None
    assert result.signal == signal.SIGKILL
    assert 0.9 < elapsed < 3


async def test_wall_cap_keeps_output_read_so_far(any_rung: str, workspace: Path) -> None:
    result = await select(any_rung).run(
        ["sh", "-c", "echo before; sleep 30"], workspace, limits=Limits(wall_s=1)
    )
    assert result.cap_hit == "wall"
    assert result.stdout == "before\n"


async def test_output_flood_is_capped(any_rung: str, workspace: Path) -> None:
    seen: list[str] = []
    result = await select(any_rung).run(
        ["yes"], workspace, limits=Limits(output_bytes=100_000, wall_s=10), on_output=seen.append
    )
    assert result.cap_hit == "output"
    assert result.exit_code is None
    assert len(result.stdout) == 100_000
    assert result.stdout.startswith("y\ny\n")
    assert "".join(seen) == result.stdout


async def test_output_cap_counts_stdout_and_stderr_together(any_rung: str, workspace: Path) -> None:
    both = """
    import sys
    while True:
        sys.stdout.write("o" * 4096)
        sys.stderr.write("e" * 4096)
    """
    result = await select(any_rung).run(
        script(both), workspace, limits=Limits(output_bytes=50_000, wall_s=10)
    )
    assert result.cap_hit == "output"
    assert len(result.stdout) + len(result.stderr) == 50_000


async def test_exit_codes_pass_through(any_rung: str, workspace: Path) -> None:
    sandbox = select(any_rung)
    ok = await sandbox.run(["true"], workspace)
    failed = await sandbox.run(["sh", "-c", "echo out; echo err >&2; exit 42"], workspace)
    assert (ok.exit_code, ok.signal, ok.cap_hit, ok.ok) == (0, None, None, True)
    assert (failed.exit_code, failed.signal, failed.cap_hit) == (42, None, None)
    assert (failed.stdout, failed.stderr) == ("out\n", "err\n")
    assert failed.backend == sandbox.backend


async def test_signal_death_reports_the_signal(any_rung: str, workspace: Path) -> None:
    result = await select(any_rung).run(["sh", "-c", "kill -TERM $$"], workspace)
    assert (result.exit_code, result.signal, result.cap_hit) == (None, signal.SIGTERM, None)


async def test_missing_program_is_unavailable(any_rung: str, workspace: Path) -> None:
    result = await select(any_rung).run(["ioh-no-such-program-xyz", "--flag"], workspace)
    assert result.unavailable
    assert result.exit_code is None
    assert not result.ok


async def test_output_is_utf8_with_replacement(any_rung: str, workspace: Path) -> None:
    result = await select(any_rung).run(["printf", "caf\\303\\251 \\377!"], workspace)
    assert result.stdout == "café \ufffd!"


async def test_live_tail_arrives_before_the_command_ends(any_rung: str, workspace: Path) -> None:
    arrivals: list[tuple[float, str]] = []
    result = await select(any_rung).run(
        ["sh", "-c", "echo first; sleep 0.6; echo second"],
        workspace,
        limits=Limits(wall_s=10),
        on_output=lambda text: arrivals.append((time.monotonic(), text)),
    )
    finished = time.monotonic()
    assert result.stdout == "first\nsecond\n"
    first_at = next(t for t, text in arrivals if "first" in text)
    assert finished - first_at > 0.4


async def test_broken_live_tail_does_not_stop_capture(any_rung: str, workspace: Path) -> None:
    def sink(_: str) -> None:
        raise RuntimeError("boom")

    result = await select(any_rung).run(
        script("print('x' * 200_000)"), workspace, limits=Limits(wall_s=10), on_output=sink
    )
    assert result.exit_code == 0
    assert len(result.stdout) == 200_001

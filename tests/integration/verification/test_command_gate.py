"""The Command gate in the real sandbox: a killed command never passes, whatever is expected."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from ioh_tui.sandbox import Limits, select
from ioh_tui.verification import Command

PY = sys.executable


async def test_exit_status_decides(tmp_path: Path) -> None:
    floor = select("floor")
    assert await Command([PY, "-c", "raise SystemExit(3)"], expect_exit=3).passes_in(
        tmp_path, floor
    )
    outcome = await Command([PY, "-c", "raise SystemExit(3)"]).passes_in(tmp_path, floor)
    assert outcome.status == "failed" and "exited 3 (expected 0)" in outcome.detail


@pytest.mark.parametrize("expect", [0, -9, 137])
async def test_a_signal_death_never_passes(tmp_path: Path, expect: int) -> None:
    argv = [PY, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"]
    outcome = await Command(argv, expect_exit=expect).passes_in(tmp_path, select("floor"))
    assert outcome.status == "failed" and "killed by signal 9" in outcome.detail


async def test_a_timed_out_command_never_passes(tmp_path: Path) -> None:
    gate = Command([PY, "-c", "import time; time.sleep(30)"], limits=Limits(wall_s=0.5))
    outcome = await gate.passes_in(tmp_path, select("floor"))
    assert outcome.status == "failed" and "killed at its wall cap" in outcome.detail


async def test_a_missing_program_is_errored(tmp_path: Path) -> None:
    outcome = await Command(["no-such-program-ioh"]).passes_in(tmp_path, select("floor"))
    assert outcome.status == "errored" and "program not found" in outcome.detail

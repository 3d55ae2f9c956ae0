"""The Command gate in the real sandbox: a killed command never passes, whatever is expected."""

from __future__ import annotations

import shutil
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


@pytest.mark.parametrize(
    ("script", "said"),
    [
        ("no-such-program-ioh", "exit 127: a program it runs was not found"),
        ("./not-executable", "exit 126: a program it runs could not be executed"),
    ],
    ids=["127", "126"],
)
async def test_a_program_the_command_could_not_start_is_errored(
    tmp_path: Path, script: str, said: str
) -> None:
    (tmp_path / "not-executable").write_text("echo hi\n")  # no execute bit
    outcome = await Command(["sh", "-c", script]).passes_in(tmp_path, select("floor"))
    assert outcome.status == "errored", outcome
    assert said in outcome.detail


async def test_an_expected_127_still_passes(tmp_path: Path) -> None:
    gate = Command(["sh", "-c", "no-such-program-ioh"], expect_exit=127)
    assert (await gate.passes_in(tmp_path, select("floor"))).status == "passed"


@pytest.mark.skipif(shutil.which("rustup") is None, reason="rustup is not installed")
async def test_a_toolchain_that_cannot_be_chosen_is_errored(tmp_path: Path) -> None:
    # rustup with an empty home has no default toolchain: its proxy refuses before rustc runs.
    empty = tmp_path / "rustup-home"
    empty.mkdir()
    argv = ["env", f"RUSTUP_HOME={empty}", "rustc", "--version"]
    outcome = await Command(argv).passes_in(tmp_path, select("floor"))
    assert outcome.status == "errored", outcome
    assert "the toolchain refused to start: rustup could not choose a version" in outcome.detail

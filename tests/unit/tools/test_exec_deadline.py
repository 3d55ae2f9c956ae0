"""A command's wall clock is at most the exec timeout and what is left of the run's time budget."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from ioh_tui.tools.command import exec_command
from tests.unit.tools.context import context

ARGV = [sys.executable, "-c", "open('ran', 'w').write('yes')"]


async def test_a_command_never_starts_once_the_time_budget_is_spent(tmp_path: Path) -> None:
    ctx = context(tmp_path, deadline=time.monotonic() - 1)
    result = await exec_command({"argv": ARGV}, ctx)
    assert not result.ok and result.output.startswith("[exec not run]")
    assert "time budget is spent" in result.output
    assert not (tmp_path / "ran").exists()


def test_the_wall_clock_is_the_least_of_asked_timeout_and_time_left(tmp_path: Path) -> None:
    ctx = context(tmp_path, exec_timeout_s=60.0, deadline=time.monotonic() + 5)
    assert 4 < ctx.wall_s() <= 5
    assert ctx.wall_s(2.0) == 2.0
    assert context(tmp_path, exec_timeout_s=60.0).wall_s(600.0) == 60.0

"""Issue 18 item 5: the agent's commands (`exec`) are capped in CPU, memory and processes.

Before, `exec` had only its wall clock and the output cap, so a 2 GiB allocation, a CPU spin and a
1,023-process tree each ran to completion. These run through the real tool, in the real sandbox.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

import ioh_tui.tools.command as command
from ioh_tui.sandbox import EXEC_LIMITS, select
from ioh_tui.tools import Permit, ToolContext, Workspace

from .conftest import PY

ALLOCATE = """
chunks = []
for _ in range(40):                       # 2.5 GiB in 64 MiB chunks, every page written
    chunks.append(b"x" * (64 << 20))
print("allocated", flush=True)
"""

SPIN = "while True: pass"

FORK_BOMB = (
    'grow() { if [ "$1" -gt 0 ]; then grow $(($1-1)) & grow $(($1-1)) & wait;'
    " else exec sleep 600; fi; }; grow 9"
)
"""A binary tree of 1,023 processes: 511 shells waiting on 512 sleepers."""


async def _allow(act: Any, target: str, **_: Any) -> Permit:
    return Permit(target)


async def _exec(rung: str, workspace: Path, argv: list[str]) -> str | None:
    ctx = ToolContext(
        workspace=Workspace.at(workspace),
        decide=_allow,
        visible=lambda _: True,
        sandbox=select(rung),
    )
    result = await command.exec_command({"argv": argv, "timeout_s": 30}, ctx)
    assert not result.ok and result.ran is not None
    assert f"it hit its {result.ran.cap_hit} cap" in result.output  # shown to the model
    return result.ran.cap_hit


def test_every_command_has_cpu_memory_and_process_caps() -> None:
    assert EXEC_LIMITS.cpu_s is not None
    assert EXEC_LIMITS.memory_mb is not None and EXEC_LIMITS.memory_mb <= 2048
    assert EXEC_LIMITS.max_processes is not None and EXEC_LIMITS.max_processes < 1023


async def test_a_two_gib_allocation_hits_the_memory_cap(any_rung: str, workspace: Path) -> None:
    assert await _exec(any_rung, workspace, [PY, "-c", ALLOCATE]) == "memory"


async def test_a_fork_bomb_hits_the_process_cap(any_rung: str, workspace: Path) -> None:
    assert await _exec(any_rung, workspace, ["sh", "-c", FORK_BOMB]) == "processes"


async def test_a_cpu_spin_hits_the_cpu_cap(
    any_rung: str, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The default (600 CPU-seconds) is too long for a test; the cap is the same mechanism.
    monkeypatch.setattr(command, "EXEC_LIMITS", dataclasses.replace(EXEC_LIMITS, cpu_s=1))
    assert await _exec(any_rung, workspace, [PY, "-c", SPIN]) == "cpu"

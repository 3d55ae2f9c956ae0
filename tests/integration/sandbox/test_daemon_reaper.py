"""Issue 18 item 13: on the floor and `none`, a daemon that clears its environment is still found.

Fork, setsid, fork, exec with an empty environment: the daemon leaves the command's process tree
(its parent exits) and carries no marker. Before, it outlived the command whenever no 40 ms sample
happened to see it; now a subreaper keeps every orphan inside the tree.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from ioh_tui.sandbox import Limits, select

from .conftest import AVAILABLE, live_with, script, token

DAEMON = """
import os, sys
for marker in sys.argv[1:]:
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            os.execve("/bin/sh", ["sh", "-c", "exec sleep " + marker], {})
        os._exit(0)
    os.wait()
print("started", flush=True)
"""


@pytest.mark.parametrize("rung", [r for r in AVAILABLE if r in ("floor", "none")])
async def test_a_daemon_with_an_empty_environment_is_gone_after_the_command(
    rung: str, workspace: Path
) -> None:
    markers = [token() for _ in range(5)]
    result = await select(rung).run(
        [*script(DAEMON), *markers], workspace, limits=Limits(wall_s=20)
    )
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "started\n"
    # Give a survivor every chance to show up: the sweep is synchronous, so none should.
    await asyncio.sleep(0.2)
    survivors = [p for m in markers for p in live_with(m)]
    for proc in survivors:
        proc.kill()
    assert survivors == []

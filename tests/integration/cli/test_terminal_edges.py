"""The command line at its edges: no terminal, a reader that goes away, a value that is not one."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.cli.test_exec import ioh, write_scenario


@pytest.mark.parametrize("args", [(), ("demo",), ("run", "fix it", "--scenario", "{s}")])
def test_the_app_without_a_terminal_is_one_line_and_exit_2(
    args: tuple[str, ...], tmp_path: Path
) -> None:
    scenario = write_scenario(tmp_path / "s.json", {"text": "hi"})
    argv = [a.format(s=scenario) for a in args]
    env = {**os.environ, "IOH_TUI_HOME": str(tmp_path)}
    done = ioh(*argv, "--store", str(tmp_path / "s.db"), cwd=tmp_path, env=env)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "needs a terminal" in lines[0], done.stderr
    assert done.stdout == ""  # not one escape code written into the redirected output


def test_term_dumb_counts_as_no_terminal(tmp_path: Path) -> None:
    leader, follower = pty.openpty()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "ioh_tui", "demo", "--store", str(tmp_path / "s.db")],
            stdin=follower,
            stdout=follower,
            stderr=subprocess.PIPE,
            env={**os.environ, "TERM": "dumb", "IOH_TUI_HOME": str(tmp_path)},
            timeout=60,
            text=True,
        )
    finally:
        os.close(follower)
        os.close(leader)
    assert done.returncode == 2
    assert "needs a terminal" in done.stderr and "Traceback" not in done.stderr


def test_a_reader_that_goes_away_ends_the_command_quietly(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    scenario = write_scenario(tmp_path / "s.json", {"text": "hi"})
    (tmp_path / "ws").mkdir()
    ioh(
        "exec",
        "hi",
        "--workspace",
        str(tmp_path / "ws"),  # not around the store: that is refused
        "--scenario",
        str(scenario),
        "--store",
        str(store),
    )
    reader, writer = os.pipe()
    os.close(reader)  # closed before the command writes: its first write meets a broken pipe
    try:
        done = subprocess.run(
            [sys.executable, "-m", "ioh_tui", "runs", "--store", str(store)],
            stdout=writer,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
        )
    finally:
        os.close(writer)
    assert (done.returncode, done.stderr) == (0, "")


def test_a_value_that_is_not_a_number_is_named_in_the_users_words() -> None:
    done = ioh("exec", "x", "--max-steps", "ten")
    assert done.returncode == 2
    assert "--max-steps: must be a positive integer, not 'ten'" in done.stderr
    assert "_positive_int" not in done.stderr
    done = ioh("exec", "x", "--time-budget", "soon")
    assert "--time-budget: must be a positive number, not 'soon'" in done.stderr


def test_resuming_a_run_whose_workspace_is_gone_is_one_line_and_exit_2(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "a.txt").write_text("a\n")
    store = str(tmp_path / "s.db")
    read = {"tool_calls": [{"name": "read_file", "arguments": {"path": "a.txt"}}]}
    scenario = write_scenario(tmp_path / "s.json", read, read)
    first = ioh(
        *("exec", "hi", "--workspace", str(workspace), "--scenario", str(scenario)),
        *("--store", store, "--on-approval", "defer", "--max-steps", "1", "--json"),
    )
    assert first.returncode == 3, first.stderr  # the step cap: a run that can be resumed
    (workspace / "a.txt").unlink()
    workspace.rmdir()
    done = ioh("resume", "1", "--headless", "--scenario", str(scenario), "--store", store)
    assert done.returncode == 2
    assert done.stderr.strip() == f"ioh-tui: run 1's workspace {workspace} no longer exists"
    assert ioh("show", "1", "--store", store).returncode == 0  # nothing recorded was lost

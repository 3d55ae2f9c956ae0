"""A real crash loop: `ioh-tui exec` is SIGKILLed at many points and resumed each time.

Whatever the kill point (between steps, inside a model stream, inside a command, inside a write),
the final workspace, step count and token total equal an uninterrupted run's, and no edit is
applied twice. A command killed mid-way pauses for the operator, who here says "run it again".
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.slow

SCENARIO: dict[str, Any] = {
    "model": "crash-model",
    "turns": [
        {
            "text": "Reading the calculator before touching anything.",
            "chunk_delay_ms": 15,
            "tool_calls": [{"name": "read_file", "arguments": {"path": "calc.py"}}],
        },
        {
            "text": "Running a slow command.",
            "chunk_delay_ms": 15,
            "tool_calls": [
                {
                    "name": "exec",
                    "arguments": {"argv": [sys.executable, "-c", "import time; time.sleep(1.0)"]},
                }
            ],
        },
        {
            "text": "Logging an entry; applying this twice would show.",
            "chunk_delay_ms": 15,
            "tool_calls": [
                {
                    "name": "edit_file",
                    "arguments": {
                        "path": "log.txt",
                        "old_text": "# log",
                        "new_text": "# log\n# entry",
                    },
                }
            ],
        },
        {
            "thinking": "The sign is wrong.",
            "text": "Fixing the operator.",
            "chunk_delay_ms": 15,
            "tool_calls": [
                {
                    "name": "edit_file",
                    "arguments": {"path": "calc.py", "old_text": "a - b", "new_text": "a + b"},
                }
            ],
        },
    ],
}


def _command(
    kind: str, root: Path, store: Path, scenario: Path, run_id: int | None = None
) -> list[str]:
    common = [
        "--scenario",
        str(scenario),
        "--store",
        str(store),
        "--json",
        "--on-approval",
        "approve",
    ]
    if kind == "exec":
        return [
            sys.executable,
            "-m",
            "ioh_tui",
            "exec",
            "fix add",
            "--workspace",
            str(root),
            "--verify-cmd",
            f"{sys.executable} check_calc.py",
            "--sandbox",
            "floor",
            *common,
        ]
    return [
        sys.executable,
        "-m",
        "ioh_tui",
        "resume",
        str(run_id),
        "--headless",
        "--sandbox",
        "floor",
        *common,
    ]


def _run(argv: list[str], kill_after: int | None) -> tuple[int | None, list[dict[str, Any]]]:
    """Run until exit, or SIGKILL once `kill_after` event lines have been read."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None
    events = []
    for line in proc.stdout:
        events.append(json.loads(line))
        if kill_after is not None and len(events) >= kill_after:
            proc.send_signal(signal.SIGKILL)
            proc.wait(30)
            return None, events
    return proc.wait(30), events


def _snapshot(root: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(root.iterdir()) if p.is_file()}


def _prepare(project: Path, where: Path) -> tuple[Path, Path, Path]:
    root = where / "ws"
    shutil.copytree(project, root)
    (root / "log.txt").write_text("# log\n")
    scenario = where / "scenario.json"
    scenario.write_text(json.dumps(SCENARIO))
    return root, where / "store.db", scenario


def _finish(
    root: Path, store: Path, scenario: Path, first_kill: int | None
) -> tuple[dict[str, Any], bool]:
    """Drive to the end; also say whether the operator was asked about an interrupted command."""
    status, events = _run(_command("exec", root, store, scenario), first_kill)
    run_id = next(e["run_id"] for e in events if "run_id" in e) if events else 1
    asked = False
    for _ in range(6):
        if status in (0, 1, 3):
            return events[-1], asked
        argv = _command("resume", root, store, scenario, run_id)
        if status == 4:  # paused on an interrupted command: the operator says run it again
            asked = True
            argv += ["--decide", "approve"]
        status, events = _run(argv, None)
    raise AssertionError(f"no end after resumes (last status {status})")


def test_uninterrupted_baseline_then_kills_everywhere(project: Path, tmp_path: Path) -> None:
    base = tmp_path / "base"
    base.mkdir()
    root, store, scenario = _prepare(project, base)
    status, events = _run(_command("exec", root, store, scenario), None)
    assert status == 0, events[-1:]
    baseline = events[-1]
    assert (baseline["outcome"], baseline["steps"]) == ("success", 4)
    expected = _snapshot(root)
    total_events = len(events)

    asked_at = []
    # Kill points by event count: inside streams, around commits, inside the slow command (right
    # after its approval), between an edit's approval and its write, before the final gate.
    points = [
        k for k in (3, 9, 11, 15, 19, 21, 26, 33, 40, 46, total_events - 2) if k < total_events
    ]
    for k in points:
        where = tmp_path / f"kill{k}"
        where.mkdir()
        root, store, scenario = _prepare(project, where)
        final, asked = _finish(root, store, scenario, k)
        if asked:
            asked_at.append(k)
        assert (final["outcome"], final["steps"], final["tokens"]) == (
            "success",
            baseline["steps"],
            baseline["tokens"],
        ), f"killed after event {k}"
        assert _snapshot(root) == expected, f"killed after event {k}"
        assert (root / "log.txt").read_text() == "# log\n# entry\n"
    assert asked_at, "no kill point landed inside the slow command"


def test_a_kill_between_a_written_edit_and_its_commit_ends_as_undisturbed(
    project: Path, tmp_path: Path
) -> None:
    """Step 4's edit is on disk but its step is not committed when the process dies.

    The gate failed on step 3 before the crash. The resumed run must not judge step 3 again (it
    would pass on step 4's uncommitted fix and end a step short): step 4 is replayed, its edit
    recognised as applied, and the run ends as the baseline does.
    """
    root, store, scenario = _prepare(project, tmp_path)
    # A post_tool hook holds step 4 open after its write, before its commit: the kill lands there.
    config = tmp_path / "xdg"
    (config / "ioh-tui").mkdir(parents=True)
    hold = "grep -q 'a + b' calc.py && sleep 60; exit 0"
    (config / "ioh-tui" / "config.toml").write_text(
        f"[[hooks.post_tool]]\nmatch = 'edit_file'\ncommand = {json.dumps(hold)}\ntimeout_s = 120\n"
    )
    env = {**os.environ, "XDG_CONFIG_HOME": str(config)}
    proc = subprocess.Popen(
        _command("exec", root, store, scenario),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    assert proc.stdout is not None
    events = []
    for line in proc.stdout:
        events.append(json.loads(line))
        if events[-1]["event"] == "approval_resolved" and events[-1]["request_id"] == 3:
            break
    for _ in range(600):
        if "a + b" in (root / "calc.py").read_text():
            break
        time.sleep(0.05)
    time.sleep(0.5)  # the hook has started: the step cannot commit before it ends
    proc.send_signal(signal.SIGKILL)
    proc.wait(30)
    assert not any(e["event"] == "step_finished" and e["step"] == 4 for e in events)

    status, resumed = _run(_command("resume", root, store, scenario, events[0]["run_id"]), None)
    assert status == 0, resumed[-1:]
    assert (resumed[-1]["outcome"], resumed[-1]["steps"]) == ("success", 4)
    assert (root / "calc.py").read_text().count("a + b") == 1


def test_a_second_live_driver_gets_a_clear_conflict(project: Path, tmp_path: Path) -> None:
    root, store, scenario = _prepare(project, tmp_path)
    slow = dict(SCENARIO, turns=[dict(t, delay_ms=400) for t in SCENARIO["turns"]])
    scenario.write_text(json.dumps(slow))
    first = subprocess.Popen(
        _command("exec", root, store, scenario),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert first.stdout is not None
    started = json.loads(first.stdout.readline())
    second = subprocess.run(
        _command("resume", root, store, scenario, started["run_id"]),
        capture_output=True,
        text=True,
        timeout=60,
    )
    first.stdout.read()
    assert first.wait(60) == 0
    assert second.returncode == 2
    assert "being driven by another process" in second.stderr and "Traceback" not in second.stderr
    assert os.path.exists(store)

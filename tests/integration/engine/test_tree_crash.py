"""An interrupted tree resumes without re-running finished children or charging anything twice."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.integration.engine.test_crash import _run

pytestmark = pytest.mark.slow

CHILD = {
    "turns": [
        {
            "text": "Child reading.",
            "delay_ms": 80,
            "tool_calls": [{"name": "read_file", "arguments": {"path": "calc.py"}}],
        },
        {"text": "Child done.", "delay_ms": 80},
    ]
}
SCENARIO: dict[str, Any] = {
    "model": "tree-model",
    "turns": [
        {
            "text": "Splitting.",
            "tool_calls": [
                {"name": "spawn_agent", "arguments": {"goal": f"part {i}"}} for i in range(6)
            ],
        },
        {"text": "All parts done."},
    ],
    "agents": {"part": CHILD},
}
OPEN_POLICY = '[policy.defaults]\nread = "allow"\nwrite = "allow"\nexec = "allow"\nnet = "deny"\n'


def _argv(kind: str, where: Path, workspace: Path) -> list[str]:
    common = [
        "--scenario",
        str(where / "s.json"),
        "--store",
        str(where / "store.db"),
        "--json",
        "--sandbox",
        "floor",
    ]
    if kind == "exec":
        return [
            sys.executable,
            "-m",
            "ioh_tui",
            "exec",
            "split",
            "--workspace",
            str(workspace),
            "--max-agents",
            "10",
            "--max-concurrent",
            "2",
            "--max-depth",
            "1",
            "--policy",
            str(where / "p.toml"),
            *common,
        ]
    return [sys.executable, "-m", "ioh_tui", "resume", "1", "--headless", *common]


def _tree(store: Path) -> list[tuple[int, str, int, int]]:
    """Each run of the tree: id, status, committed steps, tokens."""
    with sqlite3.connect(store) as db:
        return db.execute(
            "SELECT r.id, r.status, (SELECT COUNT(*) FROM steps s WHERE s.run_id = r.id),"
            " (SELECT COALESCE(SUM(tokens), 0) FROM steps s WHERE s.run_id = r.id)"
            " FROM runs r ORDER BY r.id"
        ).fetchall()


def _prepare(where: Path) -> Path:
    where.mkdir()
    (where / "p.toml").write_text(OPEN_POLICY)
    (where / "s.json").write_text(json.dumps(SCENARIO))
    return where


def _killed_after_three_children(argv: list[str]) -> None:
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None
    finished = 0
    for line in proc.stdout:
        finished += json.loads(line)["event"] == "agent_finished"
        if finished == 3:
            proc.send_signal(signal.SIGKILL)
            break
    proc.wait(30)
    assert finished == 3


def test_a_killed_tree_resumes_without_redoing_finished_children(
    project: Path, tmp_path: Path
) -> None:
    base = _prepare(tmp_path / "base")
    status, _ = _run(_argv("exec", base, project), None)
    assert status == 0
    expected = _tree(base / "store.db")
    assert len(expected) == 7 and {r[1] for r in expected} == {"completed"}

    crash = _prepare(tmp_path / "crash")
    _killed_after_three_children(_argv("exec", crash, project))
    before = _tree(crash / "store.db")
    done_before = {row[0] for row in before if row[1] == "completed"}
    assert len(done_before) >= 3
    status, events = _run(_argv("resume", crash, project), None)
    assert status == 0 and events[-1]["outcome"] == "finished"
    after = _tree(crash / "store.db")
    # The same tree as the uninterrupted run: same agents, same steps, same tokens.
    assert [(r[2], r[3]) for r in after] == [(r[2], r[3]) for r in expected]
    # Children that had finished were reported from the store, not run again.
    resumed_agents = {e.get("agent_id") for e in events if e["event"] == "step_started"}
    assert not (resumed_agents & done_before)

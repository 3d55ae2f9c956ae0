"""A run SIGKILLed inside a summarising call resumes to the same end, summarising each fold once.

The scripted model answers summarising requests after `summary_delay_ms`, so a kill shortly after
the `step_started` of the first step that compacts lands inside that call: nothing of it is
recorded, and the resumed run asks again, once.
"""

from __future__ import annotations

import json
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.slow

FILES = 10
WINDOW = 3_000


def _scenario(summary_delay_ms: float) -> dict[str, Any]:
    reads = [
        {"tool_calls": [{"name": "read_file", "arguments": {"path": f"data{i}.txt"}}]}
        for i in range(FILES)
    ]
    fix = {
        "tool_calls": [
            {
                "name": "edit_file",
                "arguments": {"path": "calc.py", "old_text": "a - b", "new_text": "a + b"},
            }
        ]
    }
    return {
        "model": "scripted-model",
        "context_window": WINDOW,
        "summary_delay_ms": summary_delay_ms,
        "turns": [*reads, fix],
    }


def _prepare(project: Path, where: Path, summary_delay_ms: float) -> tuple[Path, Path, Path]:
    where.mkdir()
    root = where / "ws"
    shutil.copytree(project, root)
    for i in range(FILES):
        # 2 KB each, different per file so no read is a repeat of another.
        (root / f"data{i}.txt").write_text((f"line {i}: " + "x" * 60 + "\n") * 30)
    scenario = where / "scenario.json"
    scenario.write_text(json.dumps(_scenario(summary_delay_ms)))
    return root, where / "store.db", scenario


def _argv(root: Path, store: Path, scenario: Path, run_id: int | None = None) -> list[str]:
    common = ["--scenario", str(scenario), "--store", str(store), "--json", "--sandbox", "floor"]
    common += ["--context-window", str(WINDOW), "--on-approval", "approve"]
    if run_id is not None:
        return [sys.executable, "-m", "ioh_tui", "resume", str(run_id), "--headless", *common]
    return [
        *(sys.executable, "-m", "ioh_tui", "exec", "fix add", "--workspace", str(root)),
        *("--verify-cmd", f"{sys.executable} check_calc.py", "--max-steps", "20", *common),
    ]


def _events(argv: list[str], kill_at_step: int | None = None) -> list[dict[str, Any]]:
    """Run to the end, or SIGKILL 0.5 s after the `step_started` of `kill_at_step`."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    events = []
    for line in proc.stdout:
        event = json.loads(line)
        events.append(event)
        if event["event"] == "step_started" and event["step"] == kill_at_step:
            time.sleep(0.5)
            proc.send_signal(signal.SIGKILL)
            proc.wait(30)
            return events
    assert proc.wait(60) in (0, 1), proc.stderr.read() if proc.stderr else ""
    return events


def _summaries(store: Path) -> list[tuple[int, int, str]]:
    with sqlite3.connect(store) as db:
        return db.execute("SELECT step, turns, text FROM summaries ORDER BY id").fetchall()


def test_a_kill_inside_a_summarising_call_resumes_to_the_same_end(
    project: Path, tmp_path: Path
) -> None:
    root, store, scenario = _prepare(project, tmp_path / "base", 0)
    baseline = _events(_argv(root, store, scenario))
    compacted = [e for e in baseline if e["event"] == "context_compacted"]
    assert len(compacted) >= 2, "the baseline must compact more than once"
    first_fold = compacted[0]["step"]

    root, store, scenario = _prepare(project, tmp_path / "killed", 3_000)
    killed = _events(_argv(root, store, scenario), kill_at_step=first_fold)
    assert killed[-1]["event"] == "step_started", "the kill landed after the run ended"
    assert _summaries(store) == [], "the kill did not land inside the summarising call"

    # The resumed run asks without a delay: the scenario is rewritten, as a new process would.
    scenario.write_text(json.dumps(_scenario(0)))
    resumed = _events(_argv(root, store, scenario, run_id=killed[0]["run_id"]))
    end, base_end = resumed[-1], baseline[-1]
    assert (
        (end["outcome"], end["steps"])
        == (base_end["outcome"], base_end["steps"])
        == (
            "success",
            FILES + 1,
        )
    )
    assert (root / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    # Each fold was summarised once and paid once: one call per step, one per summary kept.
    # (The resumed count starts uncalibrated, so it may fold at other turns than the baseline.)
    summaries = _summaries(store)
    folds = [turns for _, turns, _ in summaries]
    assert len(summaries) >= 2 and folds == sorted(set(folds))
    assert summaries[0][0] == first_fold
    assert _calls(store) == end["steps"] + len(summaries)


def _calls(store: Path) -> int:
    with sqlite3.connect(store) as db:
        return int(db.execute("SELECT COUNT(*) FROM provider_calls").fetchone()[0])

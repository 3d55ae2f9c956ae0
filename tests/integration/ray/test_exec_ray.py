"""`exec --ray ADDRESS`: the command line joins the module's cluster and runs the tree on it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.slow

SPLIT_TWO = {
    "turns": [
        {
            "tool_calls": [
                {"name": "spawn_agent", "arguments": {"goal": f"look {i}"}} for i in range(2)
            ]
        },
        {"text": "All done."},
    ],
    "agents": {"look": {"turns": [{"text": "Looked."}]}},
}


def test_exec_with_ray_address_runs_the_tree_on_the_cluster(
    cluster: Any, project: Path, tmp_path: Path
) -> None:
    scenario = tmp_path / "s.json"
    scenario.write_text(json.dumps({"model": "m", **SPLIT_TWO}))
    store = tmp_path / "store.db"
    done = subprocess.run(
        [
            sys.executable, "-m", "ioh_tui", "exec", "split", "--workspace", str(project),
            "--store", str(store), "--scenario", str(scenario), "--sandbox", "floor",
            "--max-agents", "2", "--json", "--ray", cluster.address,
        ],
        capture_output=True, text=True, timeout=90,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    finished = [e for e in events if e["event"] == "agent_finished"]
    assert [e["outcome"] for e in finished] == ["finished", "finished"]
    assert events[-1]["event"] == "run_finished" and events[-1]["outcome"] == "finished"

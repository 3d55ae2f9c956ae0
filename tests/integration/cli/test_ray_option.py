"""`--ray`: without it nothing imports Ray; without the extra it says which one to install."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SPLIT = {
    "model": "m",
    "turns": [
        {"tool_calls": [{"name": "spawn_agent", "arguments": {"goal": "look"}}]},
        {"text": "All done."},
    ],
    "agents": {"look": {"turns": [{"text": "Looked."}]}},
}

# Runs the command line in this interpreter, then says whether Ray was ever imported. With
# `hide`, Ray cannot be imported at all (as on an install without the `ray` extra).
PROGRAM = """
import sys
if sys.argv[1] == "hide":
    sys.modules["ray"] = None
from ioh_tui.cli import main
status = main(sys.argv[2:])
print("RAY-IMPORTED" if "ray" in sys.modules and sys.modules["ray"] else "NO-RAY", file=sys.stderr)
sys.exit(status)
"""


def _exec(
    tmp_path: Path, project: Path, mode: str, *extra: str
) -> subprocess.CompletedProcess[str]:
    scenario = tmp_path / "s.json"
    scenario.write_text(json.dumps(SPLIT))
    argv = [
        "exec", "split", "--workspace", str(project), "--store", str(tmp_path / "store.db"),
        "--scenario", str(scenario), "--sandbox", "floor", *extra,
    ]  # fmt: skip
    return subprocess.run(
        [sys.executable, "-c", PROGRAM, mode, *argv], capture_output=True, text=True, timeout=60
    )


def test_a_tree_without_ray_never_imports_it(tmp_path: Path, project: Path) -> None:
    done = _exec(tmp_path, project, "show", "--max-agents", "2")
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines()[-1] == "NO-RAY"


def test_ray_without_the_extra_says_which_extra_to_install(tmp_path: Path, project: Path) -> None:
    done = _exec(tmp_path, project, "hide", "--max-agents", "2", "--ray", "local")
    assert done.returncode == 2
    said = [line for line in done.stderr.splitlines() if line != "NO-RAY"]
    assert said == ["ioh-tui: --ray needs the ray extra: pip install 'ioh-tui[ray]'"]
    assert not (tmp_path / "store.db").exists()  # nothing was started


def test_ray_without_a_tree_is_refused_before_anything_starts(
    tmp_path: Path, project: Path
) -> None:
    done = _exec(tmp_path, project, "show", "--ray", "local")
    assert done.returncode == 2
    assert "--ray places a tree's sub-agents" in done.stderr
    assert done.stderr.splitlines()[-1] == "NO-RAY"

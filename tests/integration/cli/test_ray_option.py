"""`--ray`: without it nothing imports Ray; without the extra it says which one to install."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SPLIT = {
    "model": "m",
    "turns": [
        {"tool_calls": [{"name": "spawn_agent", "arguments": {"goal": "look"}}]},
        {"text": "All done."},
    ],
    "agents": {"look": {"turns": [{"text": "Looked."}]}},
}

# Runs the command line in this interpreter, then says whether Ray was ever imported. With
# `hide`, Ray cannot be imported at all (as on an install without the `ray` extra). With `count`,
# the fleet says how many children it placed on how many nodes as it is closed, and the last line
# says whether Ray was left running.
PROGRAM = """
import sys
if sys.argv[1] == "hide":
    sys.modules["ray"] = None
if sys.argv[1] == "count":
    from ioh_tui.fleet import placement
    close = placement.RayFleet.close
    async def counted(self):
        print(f"PLACED {len(self.placed)} ON {len(set(self.placed.values()))}", file=sys.stderr)
        await close(self)
    placement.RayFleet.close = counted
from ioh_tui.cli import main
status = main(sys.argv[2:])
print("RAY-IMPORTED" if "ray" in sys.modules and sys.modules["ray"] else "NO-RAY", file=sys.stderr)
if sys.argv[1] == "count":
    print("RAY-UP" if sys.modules["ray"].is_initialized() else "RAY-DOWN", file=sys.stderr)
sys.exit(status)
"""


def _exec(
    tmp_path: Path, project: Path, mode: str, *extra: str, command: str = "exec"
) -> subprocess.CompletedProcess[str]:
    scenario = tmp_path / "s.json"
    scenario.write_text(json.dumps(SPLIT))
    argv = [
        command, "split", "--workspace", str(project), "--store", str(tmp_path / "store.db"),
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


def test_the_app_takes_ray_and_refuses_it_as_exec_does(tmp_path: Path, project: Path) -> None:
    # Before the app would open (and so before it would find no terminal here).
    hidden = _exec(tmp_path, project, "hide", "--max-agents", "2", "--ray", "auto", command="run")
    assert hidden.returncode == 2
    assert hidden.stderr.splitlines()[0] == (
        "ioh-tui: --ray needs the ray extra: pip install 'ioh-tui[ray]'"
    )
    treeless = _exec(tmp_path, project, "show", "--ray", "local", command="run")
    assert treeless.returncode == 2
    assert "--ray places a tree's sub-agents" in treeless.stderr
    assert treeless.stderr.splitlines()[-1] == "NO-RAY"


def test_an_address_where_no_cluster_answers_is_one_line_at_once(
    tmp_path: Path, project: Path
) -> None:
    # Port 1 on loopback: nothing listens (Ray alone would retry for minutes).
    done = _exec(tmp_path, project, "show", "--max-agents", "2", "--ray", "127.0.0.1:1")
    assert done.returncode == 2
    said = [line for line in done.stderr.splitlines() if line != "RAY-IMPORTED"]
    assert len(said) == 1 and said[0].startswith("ioh-tui: --ray 127.0.0.1:1: no cluster answers")


@pytest.mark.slow
def test_ray_local_starts_a_cluster_for_the_run_and_stops_it(tmp_path: Path, project: Path) -> None:
    pytest.importorskip("ray")
    done = _exec(tmp_path, project, "count", "--max-agents", "2", "--ray", "local")
    assert done.returncode == 0, done.stderr
    said = done.stderr.splitlines()
    # The one child ran on the started cluster's one node, which is gone once the run has ended.
    assert "PLACED 1 ON 1" in said and said[-2:] == ["RAY-IMPORTED", "RAY-DOWN"]


def test_resume_in_the_app_joins_the_cluster_before_it_opens(tmp_path: Path, project: Path) -> None:
    assert _exec(tmp_path, project, "show", "--max-agents", "2").returncode == 0
    resumed = subprocess.run(
        [
            sys.executable, "-c", PROGRAM, "hide", "resume", "1",
            "--store", str(tmp_path / "store.db"), "--ray", "auto",
        ],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert resumed.returncode == 2
    assert resumed.stderr.splitlines()[0] == (
        "ioh-tui: --ray needs the ray extra: pip install 'ioh-tui[ray]'"
    )

"""Children on nodes that share the root's workspace work in it; the others get a copy and a patch.

On one machine every node shares the filesystem, so the copy is forced (`workspaces = "copy"`),
with the same fleet (its actors are reused) and the cluster of the session.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from ioh_tui.engine import Containment, TaskContract
from ioh_tui.engine.api import start
from ioh_tui.engine.request import NewRun, Parts
from ioh_tui.fleet.placement import RayFleet
from ioh_tui.policy import Policy
from ioh_tui.providers import ScriptedProvider
from ioh_tui.providers.testing.scenario import parse_scenario
from ioh_tui.sandbox import select
from ioh_tui.store import Store
from ioh_tui.verification import NoGate

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="session")]


def _writer(path: str, text: str) -> dict[str, Any]:
    return {
        "turns": [
            {
                "delay_ms": 150,
                "tool_calls": [
                    {"name": "write_file", "arguments": {"path": path, "content": text}}
                ],
            },
            {"text": f"Wrote {path}."},
        ]
    }


# A command may write what the write tool may not: the root's check of the patch catches it.
SNEAK = {
    "turns": [
        {
            "tool_calls": [
                {
                    "name": "exec",
                    "arguments": {
                        "argv": [sys.executable, "-c", "open('secret.txt', 'w').write('x')"]
                    },
                }
            ]
        },
        {"text": "Ran it."},
    ]
}


def _model(agents: dict[str, Any]) -> ScriptedProvider:
    spawns = [{"name": "spawn_agent", "arguments": {"goal": goal}} for goal in agents]
    scenario = {"turns": [{"tool_calls": spawns}, {"text": "All done."}], "agents": agents}
    return ScriptedProvider(parse_scenario(scenario))


async def _tree(fleet: RayFleet, project: Path, agents: dict[str, Any]) -> list[str]:
    """Run the tree; the reports the root read, in spawn order."""
    policy = Policy.permissive().layer("ops").deny_write("secret.txt")
    async with Store.memory() as store:
        parts = Parts(_model(agents), store, policy=policy, sandbox=select("floor"), fleet=fleet)
        contract = TaskContract.workspace("split", project, NoGate())
        containment = Containment(max_total_agents=8, max_concurrent=4, max_depth=1)
        result = await start(NewRun(contract, containment), parts)
        assert result.outcome == "finished"
        return [c.output for c in await store.tool_calls(result.run_id)]


async def test_auto_finds_the_shared_workspace_and_children_write_in_it(
    fleet: RayFleet, project: Path
) -> None:
    reports = await _tree(fleet, project, {"notes": _writer("notes.txt", "hi\n")})
    assert (project / "notes.txt").read_text() == "hi\n"
    assert "[workspace copy" not in reports[0]
    assert fleet.workspaces == "auto"


async def test_a_copy_comes_back_as_a_patch_the_policy_and_the_base_check(
    fleet: RayFleet, project: Path
) -> None:
    fleet.workspaces = "copy"
    try:
        agents = {
            "notes": _writer("notes.txt", "notes\n"),
            "fix one": _writer("calc.py", "def add(a, b):\n    return a + b\n"),
            "fix two": _writer("calc.py", "def add(a, b):\n    return b + a\n"),
            "sneak": SNEAK,
        }
        reports = await _tree(fleet, project, agents)
    finally:
        fleet.workspaces = "auto"
    assert (project / "notes.txt").read_text() == "notes\n"
    assert "[workspace copy: 1 change(s) applied]" in reports[0]
    # Both fixes started from the same calc.py: the first back is applied, the other refused.
    fixes = reports[1:3]
    assert sum("1 change(s) applied]" in r for r in fixes) == 1
    assert sum("calc.py (changed meanwhile by another agent)" in r for r in fixes) == 1
    assert (project / "calc.py").read_text() in (
        "def add(a, b):\n    return a + b\n",
        "def add(a, b):\n    return b + a\n",
    )
    # The command wrote secret.txt in the copy; the root's policy check refused it.
    assert "secret.txt (the policy denies the write)" in reports[3]
    assert not (project / "secret.txt").exists()

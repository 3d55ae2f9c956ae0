"""Apps of a sub-agent tree for the fleet tests and pictures: children that ask at once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ioh_tui.engine import Containment, TaskContract
from ioh_tui.policy import Policy
from ioh_tui.providers import ScriptedProvider
from ioh_tui.providers.scenario import parse_scenario
from ioh_tui.sandbox import select
from ioh_tui.tui.app import IohApp
from ioh_tui.tui.factory import make_app
from tests.tui.harness import USAGE, calc_project, fixed_clock


def writer(i: int, delay_ms: int = 0) -> dict[str, Any]:
    """A child that writes its own notes file (a write: the default policy asks)."""
    note = {"path": f"notes/child{i}.md", "content": f"notes of child {i}\n"}
    return {
        "turns": [
            {
                "text": "Writing.",
                "delay_ms": delay_ms,
                "tool_calls": [{"name": "write_file", "arguments": note}],
            },
            {"text": "Written.", "usage": USAGE},
        ]
    }


def writers_app(tmp_path: Path, children: int, *, stagger_ms: int = 0) -> IohApp:
    """A tree whose children all ask to write at about the same time (detached spawns).

    `stagger_ms` delays child i's first turn by i times that, so they ask in order (pictures).
    """
    project = calc_project(tmp_path / "project")
    spawns = [
        {"name": "spawn_agent", "arguments": {"goal": f"note {i}", "wait": False}}
        for i in range(children)
    ]
    scenario = parse_scenario(
        {
            "model": "tree-model",
            "turns": [
                {"text": "Splitting.", "tool_calls": spawns, "usage": USAGE},
                {"text": "All done.", "usage": USAGE},
            ],
            "agents": {f"note {i}": writer(i, i * stagger_ms) for i in range(children)},
        }
    )
    app = make_app(
        tmp_path / "store.db",
        contract=TaskContract.workspace("write notes", project),
        provider=ScriptedProvider(scenario),
        policy=Policy.default(),
        sandbox=select("floor"),
        containment=Containment(max_total_agents=children, max_concurrent=children, max_depth=1),
        clock=fixed_clock,
        label="scripted test model",
        remember_file=tmp_path / "remembered.toml",
    )
    app.animation_level = "none"
    return app

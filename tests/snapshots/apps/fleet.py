"""Apps of a sub-agent tree for the fleet tests and pictures: children that read, or ask at once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ioh_tui.engine import Containment, NewRun, TaskContract
from ioh_tui.policy import Policy
from ioh_tui.providers import ScriptedProvider
from ioh_tui.providers.testing.scenario import parse_scenario
from ioh_tui.sandbox import select
from ioh_tui.tui.app import IohApp
from ioh_tui.tui.app_run import AppRun
from ioh_tui.tui.cluster import AppFleet
from ioh_tui.tui.factory import make_app
from tests.tui.harness import READ_CALC, USAGE, calc_project, fixed_clock


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


def writers_app(
    tmp_path: Path, children: int, *, stagger_ms: int = 0, fleet: AppFleet | None = None
) -> IohApp:
    """A tree whose children all ask to write at about the same time (detached spawns).

    `stagger_ms` delays child i's first turn by i times that, so they ask in order (pictures).
    `fleet`: the children run there (`--ray`).
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
    containment = Containment(max_total_agents=children, max_concurrent=children, max_depth=1)
    run = AppRun(
        NewRun(TaskContract.workspace("write notes", project), containment),
        ScriptedProvider(scenario),
        Policy.default(),
        select("floor"),
        label="scripted test model",
        fleet=fleet,
    )
    app = make_app(
        tmp_path / "store.db",
        run,
        clock=fixed_clock,
        remember_file=tmp_path / "remembered.toml",
    )
    app.animation_level = "none"
    return app


def child_script(delay_ms: int = 0) -> dict[str, Any]:
    """A child that reads calc.py and answers."""
    return {
        "turns": [
            {"text": "Reading.", "delay_ms": delay_ms, "tool_calls": [READ_CALC], "usage": USAGE},
            {"text": "It subtracts.", "usage": USAGE},
        ]
    }


def tree_app(
    tmp_path: Path,
    children: int,
    *,
    max_concurrent: int = 4,
    delay_ms: int = 0,
    ceiling: int = 100_000,
) -> IohApp:
    """The app over a scripted tree: the root spawns `children` children and waits for them.

    Each child spends 1,920 tokens (two steps); `ceiling` is the tree's token ceiling.
    """
    project = calc_project(tmp_path / "project")
    spawns = [
        {"name": "spawn_agent", "arguments": {"goal": f"child task {i}", "max_steps": 3}}
        for i in range(children)
    ]
    scenario = parse_scenario(
        {
            "model": "tree-model",
            "turns": [
                {"text": "Splitting the work.", "tool_calls": spawns, "usage": USAGE},
                {"text": "All done.", "usage": USAGE},
            ],
            "agents": {"child task": child_script(delay_ms)},
        }
    )
    containment = Containment(
        max_total_agents=children + 1,
        max_concurrent=max_concurrent,
        max_depth=1,
        max_total_tokens=ceiling,
    )
    run = AppRun(
        NewRun(TaskContract.workspace("split the survey", project), containment),
        ScriptedProvider(scenario),
        Policy.permissive(),
        select("floor"),
        label="scripted test model",
    )
    app = make_app(tmp_path / "store.db", run, clock=fixed_clock)
    app.animation_level = "none"
    return app

"""A store holding a history of real runs (scripted models, the real engine) for the browser tests.

Run 1 `make add add`: success; step 1 reads `calc.py` and is refused `README.md` by a project
rule, the gate fails; step 2's write asks under the project rule `calc.py`, is approved, and the
gate passes. Run 2 `split the survey`: a tree whose root spawns two sub-agents (runs 3 and 4).
Run 5 `read forever`: stopped at its step cap. Run 6 `fix the adder again`: paused on a deferred
write. Run 7 `interrupted survey`: left `running` by a driver that died (no lease).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from ioh_tui.engine import Containment, TaskContract, run, run_tree
from ioh_tui.policy import ApproveAll, DeferAll, Policy
from ioh_tui.providers import ScriptedProvider
from ioh_tui.providers.testing.scenario import parse_scenario
from ioh_tui.sandbox import select
from ioh_tui.store import Store
from tests.tui.harness import CHECK, FIX_CALC, READ_CALC, USAGE, calc_project, scripted

READ_README = {"name": "read_file", "arguments": {"path": "README.md"}}
PROJECT_POLICY = Policy.default().layer("project").deny_read("README.md").ask_write("calc.py")
"""A project layer: README.md may not be read; writing calc.py asks under a named rule."""


def tree_provider() -> ScriptedProvider:
    """A root that spawns two children, each of which reads once."""
    spawns = [
        {"name": "spawn_agent", "arguments": {"goal": f"survey part {i}", "max_steps": 2}}
        for i in (1, 2)
    ]
    child = {"turns": [{"tool_calls": [READ_CALC], "usage": USAGE}, {"text": "Seen."}]}
    return ScriptedProvider(
        parse_scenario(
            {
                "model": "test-model",
                "turns": [
                    {"text": "Splitting.", "tool_calls": spawns, "usage": USAGE},
                    {"text": "All done.", "usage": USAGE},
                ],
                "agents": {"survey part": child},
            }
        )
    )


async def history(tmp_path: Path) -> Path:
    """Write the runs above into `tmp_path/store.db` and return its path."""
    db = tmp_path / "store.db"
    floor = select("floor")
    async with Store.open(db) as store:
        done = await run(
            TaskContract.workspace("make add add", calc_project(tmp_path / "p1"), CHECK),
            scripted(
                {"text": "Looking.", "tool_calls": [READ_CALC, READ_README], "usage": USAGE},
                {"tool_calls": [FIX_CALC], "usage": USAGE},
            ),
            store=store,
            policy=PROJECT_POLICY,
            approver=ApproveAll(),
            sandbox=floor,
        )
        assert done.outcome == "success", done
        tree = await run_tree(
            TaskContract.workspace("split the survey", calc_project(tmp_path / "p2")),
            tree_provider(),
            store=store,
            containment=Containment(max_total_agents=2, max_concurrent=2, max_depth=1),
            policy=Policy.permissive(),
            sandbox=floor,
        )
        assert tree.outcome == "finished", tree
        capped = await run(
            TaskContract.workspace("read forever", calc_project(tmp_path / "p5")).with_max_steps(1),
            scripted({"tool_calls": [READ_CALC], "usage": USAGE}),
            store=store,
            sandbox=floor,
        )
        assert capped.outcome == "step_cap_reached", capped
        paused = await run(
            TaskContract.workspace("fix the adder again", calc_project(tmp_path / "p6"), CHECK),
            scripted({"tool_calls": [FIX_CALC], "usage": USAGE}),
            store=store,
            approver=DeferAll(),
            sandbox=floor,
        )
        assert paused.outcome == "awaiting_approval", paused
        crashed = TaskContract.workspace("interrupted survey", calc_project(tmp_path / "p7"))
        await store.start_run(
            goal=crashed.goal,
            mode=crashed.mode,
            root=str(crashed.root),
            subject=None,
            contract=crashed.to_dict(),
            provider="scripted",
            model="test-model",
            sandbox="floor",
        )
    return db


def normalise(db: Path, tmp_path: Path) -> None:
    """Fixed timestamps and workspace paths, so pictures of the store never change."""
    with sqlite3.connect(db) as conn:
        ids = [row[0] for row in conn.execute("SELECT id FROM runs ORDER BY id")]
        for i in ids:
            at = f"2025-06-01T09:{i:02d}:00.000Z"
            conn.execute(
                "UPDATE runs SET started_at = ?,"
                " finished_at = CASE WHEN finished_at IS NULL THEN NULL ELSE ? END WHERE id = ?",
                (at, at, i),
            )
        for table, column in (("runs", "root"), ("runs", "contract"), ("gate_attempts", "detail")):
            conn.execute(
                f"UPDATE {table} SET {column} = replace({column}, ?, '/work')", (str(tmp_path),)
            )


def resumer_with(*turns: dict[str, Any]) -> Any:
    """A resumer for the app: a scripted model playing `turns`, in the floor sandbox."""
    from ioh_tui.tui.bridge import RunParts, given

    def parts(contract: dict[str, Any]) -> Any:
        return given(RunParts(scripted(*turns), sandbox=select("floor")))

    return parts

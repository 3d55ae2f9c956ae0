"""A sub-agent's run row, policy and spawn row are written together, or not at all."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from ioh_tui.store import SpawnCall, Store


def _child(parent: int, *, seq: int = 0, goal: str = "part 0") -> dict[str, Any]:
    return {
        "goal": goal,
        "mode": "workspace",
        "root": "/work/project",
        "subject": None,
        "contract": {"goal": goal, "root": "/work/project", "max_steps": 2},
        "provider": "scripted",
        "model": "m-1",
        "sandbox": "floor",
        "parent_run_id": parent,
        "root_run_id": parent,
        "depth": 1,
        "spawn": SpawnCall(1, seq, False, '{"rules": []}'),
    }


async def test_a_child_is_created_with_its_label_policy_and_spawn_row(
    store: Store, run_id: int
) -> None:
    child = await store.start_run(**_child(run_id))
    row = await store.run(child)
    assert (row.agent_label, row.parent_run_id, row.root_run_id, row.depth) == (
        f"agent-{child}",
        run_id,
        run_id,
        1,
    )
    assert row.contract["max_steps"] == 2
    assert await store.policy(child) == '{"rules": []}'
    assert await store.spawned(run_id, 1, 0) == child


async def test_a_failure_before_the_spawn_row_leaves_no_child_at_all(
    store: Store, run_id: int, tmp_path: Path
) -> None:
    # The write after the run row and the policy fails (as a crash there would cut it).
    with sqlite3.connect(tmp_path / "trace.db") as db:
        db.execute(
            "CREATE TRIGGER cut BEFORE INSERT ON spawns BEGIN SELECT RAISE(ABORT, 'cut'); END"
        )
    with pytest.raises(sqlite3.DatabaseError, match="cut"):
        await store.start_run(**_child(run_id))
    assert await store.children(run_id) == []
    assert await store.spawned(run_id, 1, 0) is None
    with sqlite3.connect(tmp_path / "trace.db") as db:
        assert db.execute("SELECT COUNT(*) FROM run_policies").fetchone() == (0,)


async def test_an_orphan_an_older_store_left_is_adopted_once_by_its_goal(
    store: Store, run_id: int
) -> None:
    # What the old separate writes left when killed after the first one: a run row alone.
    orphan = await store.start_run(**{**_child(run_id, goal="part 1"), "spawn": None})
    assert await store.adopt_orphan(run_id, 1, 0, "part 0", False) is None
    assert await store.adopt_orphan(run_id, 1, 1, "part 1", False) == orphan
    assert await store.spawned(run_id, 1, 1) == orphan
    assert (await store.run(orphan)).agent_label == f"agent-{orphan}"
    # Claimed: another call with the same goal makes its own child.
    assert await store.adopt_orphan(run_id, 1, 2, "part 1", False) is None

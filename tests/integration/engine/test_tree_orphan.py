"""A resumed tree adopts a child an older store left without its spawn row (no extra agent)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ioh_tui.engine import Containment, TaskContract, resume, run_tree
from ioh_tui.policy import Policy
from ioh_tui.sandbox import select
from ioh_tui.store import Store
from ioh_tui.verification import NoGate
from tests.integration.engine.test_tree import tree_model


class _Killed(BaseException):
    """Stands for the SIGKILL: nothing after it runs, no handler catches it."""


class _OldStore(Store):
    """Creates a child as stores did before one transaction did it: its run row, then dies."""

    async def start_run(self, **run: Any) -> int:
        if run.get("spawn") is None:
            return await super().start_run(**run)
        await super().start_run(**{**run, "spawn": None})
        raise _Killed


async def test_a_resumed_tree_adopts_the_orphan_and_makes_no_extra_child(
    project: Path, tmp_path: Path
) -> None:
    path = tmp_path / "trace.db"
    with pytest.raises(_Killed):
        async with _OldStore.open(path) as old:
            await run_tree(
                TaskContract.workspace("split", project, NoGate()),
                tree_model(1),
                store=old,
                containment=Containment(max_total_agents=4, max_depth=1),
                policy=Policy.permissive(),
                sandbox=select("floor"),
            )
    async with Store.open(path) as store:
        (root,) = await store.runs(roots_only=True)
        (orphan,) = await store.children(root.id)
        assert orphan.steps == 0 and await store.spawned(root.id, 1, 0) is None
        result = await resume(root.id, tree_model(1), store=store, sandbox=select("floor"))
        children = await store.children(root.id)
    assert result.outcome == "finished"
    # The orphan was adopted and ran; no second child was made for the same call.
    assert [(c.id, c.status, c.steps) for c in children] == [(orphan.id, "completed", 2)]
    assert children[0].agent_label == f"agent-{orphan.id}"

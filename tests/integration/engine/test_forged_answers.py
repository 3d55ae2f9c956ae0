"""Answers written into the store without its key are no answers (issue 18, item 2).

The attack: anything that can write the store (a command on the floor, say) rewrites a pending ask
to `approve`, with `exec allow *` among its remembered rules, using nothing but sqlite3. Before the
seal the engine took that row as the operator's answer and ran the command.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

from ioh_tui.engine import RunResult, TaskContract, resume, run
from ioh_tui.policy import ApprovalRequest, Decision, DeferAll
from ioh_tui.sandbox import select
from ioh_tui.store import Store
from ioh_tui.store.seal import key_path
from ioh_tui.verification import NoGate
from tests.integration.engine.helpers import scripted

REMOVE = {"name": "exec", "arguments": {"argv": ["rm", "victim.txt"]}}
FORGE = (
    "import sqlite3, sys\n"
    "db = sqlite3.connect(sys.argv[1])\n"
    "n = db.execute(\"UPDATE approvals SET status = 'approve', decided_by = 'attached',"
    " remembered = '[\\\"exec allow *\\\"]' WHERE status = 'pending'\").rowcount\n"
    "db.commit()\n"
    "print(n)\n"
)


def forge(db: Path) -> int:
    """Answer every pending ask `approve` (remembering `exec allow *`) with sqlite3 alone."""
    done = subprocess.run(
        [sys.executable, "-c", FORGE, str(db)], capture_output=True, text=True, check=True
    )
    return int(done.stdout)


class Held:
    """An approver that answers only when the test releases it, recording what it was shown."""

    def __init__(self, answer: Decision) -> None:
        self.answer = answer
        self.release = asyncio.Event()
        self.seen: list[ApprovalRequest] = []

    async def decide(self, request: ApprovalRequest) -> Decision:
        self.seen.append(request)
        await self.release.wait()
        return self.answer


def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "victim.txt").write_text("keep me\n")
    return root


async def paused_removal(store: Store, root: Path) -> RunResult:
    """A run paused on its ask to remove `victim.txt`."""
    return await run(
        TaskContract.workspace("tidy", root, NoGate()),
        scripted({"tool_calls": [REMOVE]}),
        store=store,
        approver=DeferAll(),
        sandbox=select("floor"),
    )


async def test_a_forged_approval_of_a_waiting_ask_does_not_run_the_command(
    tmp_path: Path,
) -> None:
    root = workspace(tmp_path)
    db = tmp_path / "store.db"
    approver = Held(Decision.deny("no"))
    async with Store.open(db) as store:
        live = asyncio.create_task(
            run(
                TaskContract.workspace("tidy", root, NoGate()),
                scripted({"tool_calls": [REMOVE]}, {"text": "done"}),
                store=store,
                approver=approver,
                sandbox=select("floor"),
            )
        )
        while not await store.approvals(pending_only=True):  # noqa: ASYNC110 - polls the store
            await asyncio.sleep(0.02)
        assert forge(db) == 1
        await asyncio.sleep(1.0)  # five polls of the waiting decision
        assert not live.done()
        assert (root / "victim.txt").exists()
        (still,) = await store.approvals(pending_only=True)
        refused = [e for e in await store.policy_events(1) if e.layer == "store"]
        approver.release.set()
        result = await asyncio.wait_for(live, 20)
        (answered,) = await store.approvals(1)
    assert (root / "victim.txt").read_text() == "keep me\n"
    assert still.status == "pending" and not still.remembered
    assert [(e.kind, e.act, e.target, e.decision) for e in refused] == [
        ("refusal", "exec", "rm victim.txt", "approve")
    ]
    assert (answered.status, answered.decided_by) == ("deny", "approver")
    assert result.remembered == ()


async def test_exec_allow_star_injected_into_a_paused_run_is_ignored_when_it_resumes(
    tmp_path: Path,
) -> None:
    root = workspace(tmp_path)
    db = tmp_path / "store.db"
    async with Store.open(db) as store:
        paused = await paused_removal(store, root)
        assert paused.outcome == "awaiting_approval"
        assert forge(db) == 1
        (shown,) = await store.approvals(pending_only=True)
        approver = Held(Decision.deny("no"))
        approver.release.set()
        result = await resume(
            paused.run_id,
            scripted({"text": "fine"}),
            store=store,
            approver=approver,
            sandbox=select("floor"),
        )
    assert shown.forged and shown.status == "pending" and shown.remembered == ()
    assert [r.target for r in approver.seen] == ["rm victim.txt"]  # the operator was asked
    assert (root / "victim.txt").exists()
    assert result.remembered == ()


async def test_a_sealed_answer_from_another_connection_still_lands(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    db = tmp_path / "store.db"
    async with Store.open(db) as store:
        paused = await paused_removal(store, root)
    async with Store.open(db) as other:
        (pending,) = await other.approvals(pending_only=True)
        assert await other.resolve_approval(pending.id, status="approve", by="queue")
    async with Store.open(db) as store:
        (answered,) = await store.approvals(paused.run_id)
        result = await resume(
            paused.run_id, scripted({"text": "fine"}), store=store, sandbox=select("floor")
        )
    assert (answered.status, answered.forged) == ("approve", False)
    assert not (root / "victim.txt").exists() and result.outcome == "finished"


async def test_the_key_is_beside_the_store_and_readable_by_the_user_only(tmp_path: Path) -> None:
    db = tmp_path / "store.db"
    async with Store.open(db) as store:
        await paused_removal(store, workspace(tmp_path))
        (pending,) = await store.approvals(pending_only=True)
        await store.resolve_approval(pending.id, status="deny", by="queue")
    key = key_path(db)
    assert os.stat(key).st_mode & 0o777 == 0o600 and key.stat().st_size == 32
    assert key.read_bytes() not in db.read_bytes()

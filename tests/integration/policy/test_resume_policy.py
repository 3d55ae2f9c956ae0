"""`resume --policy` stacks on the stored policy: an original deny stays (issue 18, item 10)."""

from __future__ import annotations

from pathlib import Path

from ioh_tui.engine import TaskContract, resume, run
from ioh_tui.policy import ApproveAll, DeferAll, Policy
from ioh_tui.sandbox import select
from ioh_tui.store import Store
from ioh_tui.verification import NoGate
from tests.integration.engine.helpers import FIX_CALC, scripted

TURNS = (
    {"tool_calls": [FIX_CALC]},
    {"tool_calls": [{"name": "exec", "arguments": {"argv": ["rm", "calc.py"]}}]},
    {"text": "done"},
)


async def test_a_resume_policy_cannot_lift_the_runs_own_deny(project: Path, tmp_path: Path) -> None:
    original = Policy.default().layer("ops").deny_exec("rm", "rm *")
    async with Store.open(tmp_path / "t.db") as store:
        paused = await run(
            TaskContract.workspace("fix", project, NoGate()).with_max_steps(4),
            scripted(*TURNS),
            store=store,
            policy=original,
            approver=DeferAll(),
            sandbox=select("floor"),
        )
        assert paused.outcome == "awaiting_approval"
        resumed = await resume(
            paused.run_id,
            scripted(*TURNS),
            store=store,
            policy=Policy.permissive(),
            approver=ApproveAll(),
            sandbox=select("floor"),
        )
        stored = Policy.from_json(await store.policy(paused.run_id) or "")
    assert resumed.outcome == "finished"
    assert (project / "calc.py").exists() and "a + b" in (project / "calc.py").read_text()
    assert any(rule.pattern == "rm *" for layer in stored.layers for rule in layer.rules)

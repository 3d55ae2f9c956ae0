"""Through the real loop: under `write *` and an approve-everything answer (`--on-approval
approve`), a git hook is still not written, and an ordinary file is (issue 18, item 4)."""

from __future__ import annotations

from pathlib import Path

from ioh_tui.engine import TaskContract, run
from ioh_tui.policy import ApproveAll, Policy
from ioh_tui.sandbox import select
from ioh_tui.store import Store
from ioh_tui.verification import NoGate
from tests.integration.engine.helpers import Recorder, scripted


def _write(path: str) -> dict[str, object]:
    return {"tool_calls": [{"name": "write_file", "arguments": {"path": path, "content": "x"}}]}


async def test_a_hook_is_not_planted_under_a_broad_rule_and_a_blanket_approval(
    project: Path,
) -> None:
    (project / ".git" / "hooks").mkdir(parents=True)
    recorder = Recorder()
    async with Store.memory() as store:
        await run(
            TaskContract.workspace("plant", project, NoGate()).with_max_steps(4),
            scripted(_write(".git/hooks/pre-commit"), _write("notes.txt"), {"text": "done"}),
            store=store,
            policy=Policy.default().layer("project").allow_write("*"),
            approver=ApproveAll(),
            sandbox=select("floor"),
            observers=[recorder],
        )
    asked = recorder.of("approval_requested")
    assert [(a.target, a.layer) for a in asked] == [
        (".git/hooks/pre-commit", "builtin-host-executed")
    ]
    assert not (project / ".git" / "hooks" / "pre-commit").exists()
    assert (project / "notes.txt").read_text() == "x"

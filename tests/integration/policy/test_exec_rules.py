"""Exec rules through the real loop: what an allow says runs unasked; a wrapped or quoted `rm` is
refused (issue 18, items 15 and 10)."""

from __future__ import annotations

from pathlib import Path

from ioh_tui.engine import TaskContract, run
from ioh_tui.policy import Decision, Policy
from ioh_tui.sandbox import select
from ioh_tui.store import Store
from ioh_tui.verification import NoGate
from tests.integration.engine.helpers import Recorder, scripted
from tests.integration.engine.test_approvals import Scripted


def _exec(*argv: str) -> dict[str, object]:
    return {"tool_calls": [{"name": "exec", "arguments": {"argv": list(argv)}}]}


async def _outputs(project: Path, policy: Policy, approver: Scripted, *turns: object) -> list[str]:
    recorder = Recorder()
    async with Store.memory() as store:
        await run(
            TaskContract.workspace("try", project, NoGate()).with_max_steps(len(turns) + 1),
            scripted(*turns, {"text": "done"}),  # type: ignore[arg-type]
            store=store,
            policy=policy,
            approver=approver,
            sandbox=select("floor"),
            observers=[recorder],
        )
    return [event.output for event in recorder.of("tool_call_finished")]


async def test_allow_rules_with_a_space_run_unasked(project: Path) -> None:
    policy = Policy.default().layer("project").allow_exec("true *", "ls -a")
    asked = Scripted()
    outputs = await _outputs(project, policy, asked, _exec("true", "x"), _exec("ls", "-a"))
    assert asked.seen == []
    assert outputs[0].startswith("[exec `true x` exit 0]")
    assert outputs[1].startswith("[exec `ls -a` exit 0]") and "calc.py" in outputs[1]


async def test_a_wrapped_rm_is_refused_by_a_deny_on_rm(project: Path) -> None:
    policy = Policy.default().layer("project").allow_exec("*").deny_exec("rm", "rm *")
    outputs = await _outputs(
        project,
        policy,
        Scripted(),
        _exec("env", "rm", "calc.py"),
        _exec("find", ".", "-name", "calc.py", "-delete"),
    )
    assert (project / "calc.py").exists()
    assert all(output.startswith("[exec refused]") for output in outputs)


async def test_an_approved_rewrite_with_a_quoted_rm_is_refused(project: Path) -> None:
    policy = Policy.default().layer("project").deny_exec("rm", "rm *")
    asked = Scripted(Decision.rewrite(target="'rm' -f calc.py"))
    outputs = await _outputs(project, policy, asked, _exec("ls"))
    assert len(asked.seen) == 1
    assert (project / "calc.py").exists()
    assert "may not cross a deny" in outputs[0]

"""Hooks through the real loop: real hook processes in the real sandbox, a model on loopback.

Each hook is a small Python script in the workspace's `.ioh-tui/hooks/` (the sandbox sees the
workspace, not the test's other temporary files); the model is the fake server on 127.0.0.1, so
the tests read exactly what the model was sent.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ioh_tui.core.acts import Act, Effect
from ioh_tui.engine import NewRun, Parts, RunResult, TaskContract, start
from ioh_tui.hooks import STOP_BLOCK_LIMIT, HookSet
from ioh_tui.policy import Approver, Decision, DenyAll, Policy
from ioh_tui.providers import Compatible
from ioh_tui.providers.testing.fake_server import FakeModelServer
from ioh_tui.providers.testing.scenario import parse_scenario
from ioh_tui.sandbox import select
from ioh_tui.store import GateAttemptRow, PolicyEventRow, SandboxEventRow, Store, ToolCallRow
from ioh_tui.verification import Criterion
from tests.integration.engine.helpers import CHECK, Recorder
from tests.integration.engine.test_approvals import Scripted

FINISH: dict[str, Any] = {"text": "done"}


def exec_call(*argv: str) -> dict[str, Any]:
    return {"name": "exec", "arguments": {"argv": list(argv)}}


def hook(root: Path, name: str, body: str) -> list[str]:
    """A hook script in the workspace, as the argv a configuration would give."""
    folder = root / ".ioh-tui" / "hooks"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text("import json, sys\npayload = json.load(sys.stdin)\n" + body)
    return [sys.executable, f".ioh-tui/hooks/{name}"]


@dataclass
class Ran:
    """What a run left: its result, the model's requests, events, and the store's rows."""

    result: RunResult
    bodies: list[str]
    seen: Recorder
    calls: list[ToolCallRow]
    policy_events: list[PolicyEventRow]
    sandbox_events: list[SandboxEventRow]
    gates: list[GateAttemptRow]

    def hook_rows(self) -> list[str]:
        return [e.detail for e in self.sandbox_events if e.kind == "hook"]


async def drive(
    root: Path,
    turns: Sequence[dict[str, Any]],
    hooks: Mapping[str, list[dict[str, Any]]],
    *,
    policy: Policy | None = None,
    approver: Approver | None = None,
    criterion: Criterion | None = None,
) -> Ran:
    scenario = parse_scenario({"model": "m", "turns": list(turns)})
    seen = Recorder()
    async with FakeModelServer(scenario) as server, Store.memory() as store:
        provider = Compatible(base_url=server.base_url, model="m")
        parts = Parts(
            provider,
            store,
            policy=policy or Policy.permissive(),
            approver=approver or DenyAll(),
            sandbox=select("auto"),
            observers=(seen,),
            hooks=HookSet.from_config(hooks),
        )
        result = await start(NewRun(TaskContract.workspace("work", root, criterion)), parts)
        await provider.aclose()
        bodies = [json.dumps(r.body) for r in server.requests if r.body is not None]
        return Ran(
            result,
            bodies,
            seen,
            await store.tool_calls(result.run_id),
            await store.policy_events(result.run_id),
            await store.sandbox_events(result.run_id),
            await store.gate_attempts(result.run_id),
        )


DENY_RM = """
argv = payload["arguments"].get("argv", [])
if argv[:1] == ["rm"]:
    print(json.dumps({"decision": "deny", "reason": "rm is off limits; move files to trash/"}))
"""


async def test_a_pre_tool_deny_refuses_even_what_the_policy_allows(project: Path) -> None:
    deny = hook(project, "deny_rm.py", DENY_RM)
    ran = await drive(
        project,
        [{"tool_calls": [exec_call("rm", "calc.py"), exec_call("true")]}, FINISH],
        {"pre_tool": [{"match": "exec", "command": deny}]},
        policy=Policy.permissive(),
    )
    assert ran.result.outcome == "finished", ran.result.detail
    assert (project / "calc.py").exists()
    refused, allowed = ran.calls
    assert refused.refused and "rm is off limits; move files to trash/" in refused.output
    assert "denied by hook pre_tool#0" in refused.output
    assert allowed.ok and not allowed.refused
    # The reason reaches the model's next request.
    assert "rm is off limits" not in ran.bodies[0]
    assert "rm is off limits; move files to trash/" in ran.bodies[1]
    # Who decided: the hook, in the policy events, the event stream and the trace.
    (event,) = [e for e in ran.policy_events if e.kind == "refusal"]
    assert event.act is Act.EXEC and (event.source or "").startswith("hook pre_tool#0")
    assert [e.outcome for e in ran.seen.of("hook_ran")] == ["deny", "none"]
    assert any("deny — rm is off limits" in row for row in ran.hook_rows())


REWRITE = """
argv = payload["arguments"]["argv"]
new = ["echo", "rewritten"] if argv[1] == "first" else ["rm", "-f", "calc.py"]
print(json.dumps({"arguments": {"argv": new}}))
"""


async def test_rewritten_arguments_are_checked_against_the_policy_again(project: Path) -> None:
    rewrite = hook(project, "rewrite.py", REWRITE)
    policy = Policy.permissive().layer("project").rule(Act.EXEC, Effect.DENY, "rm *")
    ran = await drive(
        project,
        [{"tool_calls": [exec_call("echo", "first"), exec_call("echo", "second")]}, FINISH],
        {"pre_tool": [{"command": rewrite}]},
        policy=policy,
    )
    first, second = ran.calls
    assert first.ok and "rewritten" in first.output and "first" not in first.output.split("]")[-1]
    assert "the arguments were rewritten by hook pre_tool#0" in first.output
    # The rewrite crossed a deny: the tool's own policy check saw the rewritten command.
    assert second.refused and "[exec refused] rm -f calc.py" in second.output
    assert (project / "calc.py").exists()
    assert [e.outcome for e in ran.seen.of("hook_ran")] == ["rewrite", "rewrite"]


HANG = "import time\ntime.sleep(60)\n"
GARBAGE = "print('allow, I suppose')\n"


async def test_a_hanging_or_babbling_hook_is_killed_reported_and_decides_nothing(
    project: Path,
) -> None:
    hang = hook(project, "hang.py", HANG)
    garbage = hook(project, "garbage.py", GARBAGE)
    began = time.monotonic()
    ran = await drive(
        project,
        [{"tool_calls": [exec_call("echo", "still ran")]}, FINISH],
        {
            "pre_tool": [
                {"command": hang, "timeout_s": 1},
                {"command": garbage},
            ]
        },
        policy=Policy.permissive(),
    )
    assert time.monotonic() - began < 30
    (call,) = ran.calls
    # Neither hook decided: the act went ahead under the policy (which allows it).
    assert call.ok and "still ran" in call.output
    hang_ran, garbage_ran = ran.seen.of("hook_ran")
    assert hang_ran.outcome == "failed" and "timed out after 1s" in hang_ran.reason
    assert hang_ran.duration_ms < 10_000
    assert garbage_ran.outcome == "failed" and "answered garbage: not JSON" in garbage_ran.reason
    assert len([r for r in ran.hook_rows() if ": failed — " in r]) == 2


async def test_a_hanging_hook_leaves_an_ask_to_the_policy(project: Path) -> None:
    hang = hook(project, "hang.py", HANG)
    ran = await drive(
        project,
        [{"tool_calls": [exec_call("echo", "asked")]}, FINISH],
        {"pre_tool": [{"command": hang, "timeout_s": 1}]},
        policy=Policy.default(),
        approver=DenyAll(),
    )
    (call,) = ran.calls
    assert call.refused and "no approver available" in call.output
    assert ran.seen.of("approval_requested"), "the policy's ask still went to the approver"


ANSWER = """
print(json.dumps({"decision": payload["arguments"]["argv"][1], "reason": "the hook says so"}))
"""


async def test_a_hook_allow_answers_an_ask_but_never_a_deny(project: Path) -> None:
    answer = hook(project, "answer.py", ANSWER)
    policy = Policy.default().layer("project").rule(Act.EXEC, Effect.DENY, "false *")
    ran = await drive(
        project,
        [{"tool_calls": [exec_call("echo", "allow"), exec_call("false", "allow")]}, FINISH],
        {"pre_tool": [{"match": "exec", "command": answer}]},
        policy=policy,
        approver=DenyAll(),
    )
    asked, denied = ran.calls
    # The policy asks about `echo`; the hook's allow answered it, with no one asked.
    assert asked.ok and "allow" in asked.output
    assert not ran.seen.of("approval_requested")
    (decision,) = [e for e in ran.policy_events if e.kind == "decision"]
    assert decision.decision == "approve" and (decision.source or "").startswith("hook ")
    # The policy denies `false *`: the hook's allow does not move it.
    assert denied.refused and "[exec refused] false allow" in denied.output


async def test_a_hook_ask_asks_where_the_policy_allows(project: Path) -> None:
    answer = hook(project, "answer.py", ANSWER)
    approver = Scripted(Decision.deny("not now"))
    ran = await drive(
        project,
        [{"tool_calls": [exec_call("echo", "ask")]}, FINISH],
        {"pre_tool": [{"command": answer}]},
        policy=Policy.permissive(),
        approver=approver,
    )
    (call,) = ran.calls
    assert call.refused and "not now" in call.output
    (request,) = approver.seen
    assert request.layer == "hooks" and "the hook says so" in (request.rule or "")


ADD = """
if payload["ok"]:
    print(json.dumps({"add": "remember: calc.py has no tests of its own"}))
"""


async def test_post_tool_adds_text_the_model_reads(project: Path) -> None:
    add = hook(project, "add.py", ADD)
    ran = await drive(
        project,
        [{"tool_calls": [{"name": "read_file", "arguments": {"path": "calc.py"}}]}, FINISH],
        {"post_tool": [{"match": "read_*|grep", "command": add}]},
    )
    (call,) = ran.calls
    assert call.output.endswith("remember: calc.py has no tests of its own")
    assert "return a - b" in call.output
    assert "remember: calc.py has no tests of its own" in ran.bodies[1]
    assert [e.outcome for e in ran.seen.of("hook_ran")] == ["add"]


BLOCK_ONCE = """
if payload["blocks_left"] == 3:
    print(json.dumps({"decision": "block", "reason": "run check_calc.py before you stop"}))
"""
BLOCK_ALWAYS = """
print(json.dumps({"decision": "block", "reason": "never done"}))
"""


async def test_stop_keeps_the_run_going_once_with_its_reason(project: Path) -> None:
    once = hook(project, "once.py", BLOCK_ONCE)
    ran = await drive(
        project,
        [{"text": "all done"}, {"text": "ran it, really done"}, {"text": "unreached"}],
        {"stop": [{"command": once}]},
    )
    assert ran.result.outcome == "finished" and ran.result.steps == 2
    assert len(ran.bodies) == 2
    assert "run check_calc.py before you stop" not in ran.bodies[0]
    assert "run check_calc.py before you stop" in ran.bodies[1]
    assert [e.outcome for e in ran.seen.of("hook_ran")] == ["block", "none"]


async def test_stop_blocks_are_limited_per_run(project: Path) -> None:
    always = hook(project, "always.py", BLOCK_ALWAYS)
    ran = await drive(
        project,
        [{"text": f"done {i}"} for i in range(6)],
        {"stop": [{"command": always}]},
    )
    assert ran.result.outcome == "finished"
    assert ran.result.steps == STOP_BLOCK_LIMIT + 1
    outcomes = [e.outcome for e in ran.seen.of("hook_ran")]
    assert outcomes == ["block"] * STOP_BLOCK_LIMIT + ["ignored"]


LOG = """
with open(".ioh-tui/notified.jsonl", "a") as out:
    out.write(json.dumps(payload) + "\\n")
print("anything: a notification's answer is not read")
"""


async def test_notification_hears_a_waiting_decision_and_the_end(project: Path) -> None:
    log = hook(project, "log.py", LOG)
    ran = await drive(
        project,
        [{"tool_calls": [exec_call("echo", "hi")]}, FINISH],
        {"notification": [{"command": log}]},
        policy=Policy.default(),
        approver=Scripted(Decision.approve()),
    )
    assert ran.result.outcome == "finished"
    lines = (project / ".ioh-tui" / "notified.jsonl").read_text().splitlines()
    told = [json.loads(line) for line in lines]
    assert [t["kind"] for t in told] == ["approval_waiting", "run_finished"]
    assert told[0]["act"] == "exec" and told[0]["target"] == "echo hi"
    assert told[1]["outcome"] == "finished" and told[1]["event"] == "notification"
    assert [e.outcome for e in ran.seen.of("hook_ran")] == ["notified", "notified"]
    # Every notification's row comes before the run's last event.
    assert ran.seen.kinds()[-1] == "run_finished"


async def test_a_blocked_success_is_judged_again_after_the_next_step(project: Path) -> None:
    once = hook(project, "once.py", BLOCK_ONCE)
    (project / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    ran = await drive(
        project,
        [{"text": "fixed"}, {"text": "checked"}],
        {"stop": [{"command": once}]},
        criterion=CHECK,
    )
    assert ran.result.outcome == "success" and ran.result.steps == 2
    assert [g.status for g in ran.gates] == ["passed", "passed"]
    blocked, allowed = ran.seen.of("hook_ran")
    assert (blocked.outcome, allowed.outcome) == ("block", "none")
    assert "run check_calc.py before you stop" in blocked.reason


HIDDEN = """
try:
    said = open(".env").read()
except OSError as exc:
    said = f"cannot read .env: {type(exc).__name__}"
print(json.dumps({"add": said}))
"""


async def test_a_hook_cannot_read_what_the_policy_denies(project: Path) -> None:
    (project / ".env").write_text("SECRET=hunter2\n")
    peek = hook(project, "peek.py", HIDDEN)
    ran = await drive(
        project,
        [{"tool_calls": [{"name": "list_dir", "arguments": {}}]}, FINISH],
        {"post_tool": [{"command": peek}]},
        policy=Policy.default(),
    )
    (call,) = ran.calls
    assert "hunter2" not in call.output and "hunter2" not in ran.bodies[1]
    assert "cannot read .env: PermissionError" in call.output

"""Deferred decisions across processes: `exec --on-approval defer`, `approvals`, `resume`."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from ioh_tui.engine import Containment, TaskContract, run, run_tree
from ioh_tui.policy import ApprovalRequest, Decision
from ioh_tui.providers import ScriptedProvider
from ioh_tui.providers.testing.scenario import parse_scenario
from ioh_tui.sandbox import select
from ioh_tui.store import Store
from ioh_tui.verification import NoGate
from tests.integration.cli.test_exec import FIX, ioh, write_scenario
from tests.integration.engine.helpers import CHECK, scripted

FIXED = "def add(a, b):\n    return a + b\n"


def _exec_deferred(project: Path, tmp_path: Path) -> tuple[Path, int]:
    scenario = write_scenario(tmp_path / "s.json", *FIX)
    store = tmp_path / "store.db"
    done = ioh(
        "exec",
        "make add add",
        "--workspace",
        str(project),
        "--scenario",
        str(scenario),
        "--verify-cmd",
        f"{sys.executable} check_calc.py",
        "--on-approval",
        "defer",
        "--json",
        "--store",
        str(store),
        "--sandbox",
        "floor",
    )
    assert done.returncode == 4, done.stderr
    last = json.loads(done.stdout.splitlines()[-1])
    assert (last["event"], last["outcome"]) == ("run_finished", "awaiting_approval")
    return store, last["run_id"]


def test_a_deferred_write_is_listed_then_applied_once_by_another_process(
    project: Path, tmp_path: Path
) -> None:
    store, run_id = _exec_deferred(project, tmp_path)
    assert "a - b" in (project / "calc.py").read_text()
    (pending,) = [
        json.loads(x) for x in ioh("approvals", "--json", "--store", str(store)).stdout.splitlines()
    ]
    assert (pending["run_id"], pending["act"], pending["target"], pending["goal"]) == (
        run_id,
        "write",
        "calc.py",
        "make add add",
    )
    assert "calc.py" in ioh("approvals", "--store", str(store)).stdout

    # A second process answers; the provider options stored with the run are reused.
    done = ioh(
        "resume",
        str(run_id),
        "--decide",
        "approve",
        "--headless",
        "--store",
        str(store),
        "--sandbox",
        "floor",
    )
    assert done.returncode == 0, done.stderr
    assert (project / "calc.py").read_text() == FIXED
    assert ioh("approvals", "--json", "--store", str(store)).stdout == ""

    again = ioh("resume", str(run_id), "--headless", "--json", "--store", str(store))
    assert (
        again.returncode == 0 and json.loads(again.stdout.splitlines()[-1])["outcome"] == "success"
    )
    assert again.stderr == f"ioh-tui: run {run_id} has ended (success): nothing is left to resume\n"
    assert (project / "calc.py").read_text() == FIXED  # applied exactly once
    trace = json.loads(ioh("show", str(run_id), "--json", "--store", str(store)).stdout)
    (approval,) = trace["approvals"]
    assert (approval["status"], approval["decided_by"]) == ("approve", "resumed")


def test_a_deferred_write_denied_later_is_read_by_the_model(project: Path, tmp_path: Path) -> None:
    store, run_id = _exec_deferred(project, tmp_path)
    done = ioh(
        "resume",
        str(run_id),
        "--decide",
        "deny",
        "--reason",
        "not this way",
        "--headless",
        "--max-steps",
        "3",
        "--store",
        str(store),
        "--sandbox",
        "floor",
    )
    assert done.returncode == 3, done.stderr
    assert "a - b" in (project / "calc.py").read_text()
    trace = json.loads(ioh("show", str(run_id), "--json", "--store", str(store)).stdout)
    edit = next(c for c in trace["tool_calls"] if c["name"] == "edit_file")
    assert edit["output"] == "[write denied] calc.py — not this way"


class Waiting:
    """An approver that never answers itself (a person away from the screen)."""

    async def decide(self, request: ApprovalRequest) -> Decision:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")


async def test_resume_decide_answers_a_live_run_waiting_in_another_process(
    project: Path, tmp_path: Path
) -> None:
    db = tmp_path / "store.db"
    async with Store.open(db) as store:
        live = asyncio.create_task(
            run(
                TaskContract.workspace("fix", project, CHECK),
                scripted(FIX[1], {"text": "ok"}),
                store=store,
                approver=Waiting(),
                sandbox=select("floor"),
            )
        )
        while not await store.approvals(pending_only=True):  # noqa: ASYNC110 - polls the store
            await asyncio.sleep(0.02)
        answer = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "ioh_tui",
            "resume",
            "1",
            "--decide",
            "approve",
            "--headless",
            "--scenario",
            str(write_scenario(tmp_path / "s.json", {"text": "x"})),
            "--store",
            str(db),
            stderr=asyncio.subprocess.PIPE,
        )
        _, err = await answer.communicate()
        result = await asyncio.wait_for(live, 20)
    assert answer.returncode == 0, err
    assert b"the live run continues" in err
    assert result.outcome == "success" and (project / "calc.py").read_text() == FIXED


async def test_resume_raises_the_ceiling_of_a_tree_it_stopped(
    project: Path, tmp_path: Path
) -> None:
    store = tmp_path / "store.db"
    child = {"turns": [{"text": "Seen.", "usage": {"input_tokens": 500, "output_tokens": 100}}]}
    spawns = [{"name": "spawn_agent", "arguments": {"goal": f"part {i}"}} for i in range(3)]
    async with Store.open(store) as db:
        stopped = await run_tree(
            TaskContract.workspace("split", project, NoGate()),
            ScriptedProvider(
                parse_scenario({"turns": [{"tool_calls": spawns}], "agents": {"part": child}})
            ),
            store=db,
            containment=Containment(max_total_agents=3, max_concurrent=1, max_total_tokens=1000),
            sandbox=select("floor"),
        )
    assert stopped.outcome == "cost_budget_exceeded"
    # The root's second step ends the run (no criterion); the first is in the store.
    scenario = write_scenario(tmp_path / "s.json", {"text": "(stored)"}, {"text": "All done."})
    common = ("--headless", "--json", "--store", str(store), "--sandbox", "floor")
    given = ("--provider", "scripted", "--scenario", str(scenario))
    lower = ioh("resume", str(stopped.run_id), *common, *given, "--tree-token-budget", "500")
    assert lower.returncode == 2 and "must be higher" in lower.stderr
    done = ioh("resume", str(stopped.run_id), *common, *given, "--tree-token-budget", "5000")
    assert done.returncode == 0, done.stderr
    last = json.loads(done.stdout.splitlines()[-1])
    assert last["outcome"] == "finished"
    async with Store.open(store) as db:
        run_row = await db.run(stopped.run_id)
    assert run_row.contract["containment"]["max_total_tokens"] == 5000

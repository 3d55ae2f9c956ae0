"""A run another process drives, answered with rewrite or remember (not only approve or deny).

The waiting run is a real `ioh-tui exec --on-approval wait` process on a real SQLite file; the
answer comes from another real process (`resume --decide rewrite|remember`) or from the app
(Pilot) on the same store: the queue, and a live run's read-only trace. The answer is sealed into
the store; the waiting process applies it (a rewrite re-checked against its policy, a remembered
rule kept for the rest of its run).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.widgets import TextArea

from ioh_tui.cli import main
from ioh_tui.config.remembered import rules_file
from ioh_tui.policy import load_policy_file
from ioh_tui.store import Store
from ioh_tui.tui.factory import make_app
from tests.integration.cli.test_exec import ioh
from tests.integration.cli.test_waiting_runs import WaitingExec
from tests.tui.harness import modal, until
from tests.tui.test_queue import queue_from_start
from tests.tui.test_sessions import live_trace

pytestmark = pytest.mark.slow

TWICE: list[dict[str, Any]] = [
    {"tool_calls": [{"name": "write_file", "arguments": {"path": "a.txt", "content": "1"}}]},
    {"tool_calls": [{"name": "write_file", "arguments": {"path": "a.txt", "content": "2"}}]},
    {"text": "done"},
]
"""Two writes of the same file: a remembered rule lets the second go without an ask."""

SWAPPED = "def add(a, b):\n    return b + a\n"


def asked(run: WaitingExec) -> list[dict[str, Any]]:
    return [e for e in run.events if e["event"] == "approval_requested"]


def decide(run: WaitingExec, run_id: int, *how: str) -> str:
    """`ioh-tui resume RUN --decide ... --headless` on the waiting run; its stderr."""
    done = ioh(
        "resume", str(run_id), "--decide", *how, "--headless", "--store", str(run.store)
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stderr


def test_resume_decide_rewrite_runs_the_rewritten_edit(project: Path, tmp_path: Path) -> None:
    run = WaitingExec(project, tmp_path)
    try:
        ask = run.until("approval_requested")
        said = decide(run, ask["run_id"], "rewrite", "--to", SWAPPED)
        resolved = run.until("approval_resolved")
        status, last = run.finish()
    finally:
        run.close()
    assert "(rewrite); the live run continues" in said
    assert (resolved["decision"], resolved["modified"]) == ("approve", True)
    assert (status, last["outcome"]) == (0, "success")
    assert (project / "calc.py").read_text() == SWAPPED


def test_resume_decide_remember_keeps_the_rule_for_the_waiting_run(
    project: Path, tmp_path: Path
) -> None:
    run = WaitingExec(project, tmp_path, turns=TWICE, verify=False)
    try:
        ask = run.until("approval_requested")
        said = decide(run, ask["run_id"], "remember", "--pattern", "*.txt")
        resolved = run.until("approval_resolved")
        status, last = run.finish()
    finally:
        run.close()
    assert "(remember)" in said
    assert resolved["remembered"] == ["write allow *.txt"]
    assert (status, last["outcome"]) == (0, "finished")
    assert len(asked(run)) == 1  # the second write went by the remembered rule
    assert (project / "a.txt").read_text() == "2"
    # Kept for the run only: nothing was saved for the project.
    assert not rules_file("project", project).exists()


async def test_decide_options_go_with_their_answer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = str(tmp_path / "s.db")
    async with Store.open(store):
        pass  # a store exists: what is refused is the options
    for argv, said in (
        (("--decide", "rewrite"), "--decide rewrite needs --to TEXT"),
        (("--decide", "approve", "--to", "x"), "--to goes with --decide rewrite"),
        (("--decide", "deny", "--scope", "user"), "--scope goes with --decide remember"),
        (("--decide", "remember"), "--decide remember needs --headless"),
    ):
        assert main(["resume", "1", *argv, "--store", store]) == 2, argv
        err = capsys.readouterr().err
        assert said in err and len(err.splitlines()) == 1, err


async def test_the_queue_rewrites_a_waiting_edit(project: Path, tmp_path: Path) -> None:
    run = WaitingExec(project, tmp_path)
    try:
        ask = run.until("approval_requested")
        app = make_app(run.store)
        app.animation_level = "none"
        async with app.run_test(size=(140, 40)) as pilot:
            queue = await queue_from_start(pilot)
            assert [i.where for i in queue.items] == ["elsewhere"]
            await pilot.press("enter")
            shown = await modal(pilot)
            await pilot.press("e")
            area = shown.query_one("#rewrite-text", TextArea)
            area.text = SWAPPED
            await pilot.press("ctrl+s")
            await until(pilot, lambda: not queue.items)
        status, last = run.finish()
    finally:
        run.close()
    assert (status, last["outcome"]) == (0, "success")
    assert (project / "calc.py").read_text() == SWAPPED
    async with Store.open(run.store) as store:
        row = await store.approval(ask["request_id"])
    assert row is not None and row.answer.performed_content == SWAPPED


async def test_a_live_trace_remembers_a_rule_for_the_project(project: Path, tmp_path: Path) -> None:
    run = WaitingExec(project, tmp_path, turns=TWICE, verify=False)
    try:
        run.until("approval_requested")
        app = make_app(run.store)
        app.animation_level = "none"
        async with app.run_test(size=(140, 40)) as pilot:
            trace = await live_trace(pilot)
            await pilot.press("a")
            await modal(pilot)
            await pilot.press("a")
            await pilot.click("#scope-project")
            await pilot.press("ctrl+s")
            await app.workers.wait_for_complete()  # answered, and the rule saved
            status, last = run.finish()
            # The read-only view ends where the other process ended (and is idle at exit).
            facts = trace.query_one("#trace-facts")
            await until(pilot, lambda: "finished" in str(facts.render()))
    finally:
        run.close()
    assert (status, last["outcome"]) == (0, "finished")
    assert len(asked(run)) == 1
    assert (project / "a.txt").read_text() == "2"
    saved = load_policy_file(rules_file("project", project))
    assert [r.describe() for layer in saved.layers for r in layer.rules] == ["write allow a.txt"]

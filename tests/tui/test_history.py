"""The browser's rules without an app: states, filters, why a run cannot resume, the resumer."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from ioh_tui.cli.options import stored_provider
from ioh_tui.core.acts import Act
from ioh_tui.core.errors import ConfigError
from ioh_tui.core.outcomes import run_state
from ioh_tui.engine.decide import request_from_row
from ioh_tui.policy import Decision
from ioh_tui.store import ApprovalRow
from ioh_tui.store.db import RunRow
from ioh_tui.tui.cells import cell
from ioh_tui.tui.history import in_group, matches, resume_refusal, stopping_budget
from ioh_tui.tui.totals import Budget
from ioh_tui.tui.traces import arguments, gate_detail

RUN = RunRow(
    id=4,
    goal="Fix the adder",
    mode="workspace",
    root="/work",
    subject=None,
    contract={},
    provider="scripted",
    model="m",
    sandbox="floor",
    parent_run_id=None,
    root_run_id=4,
    depth=0,
    agent_label="root",
    status="completed",
    outcome="success",
    detail="",
    started_at="2025-06-01T09:00:00.000Z",
    finished_at=None,
    steps=2,
    tokens=10,
)
REQUEST = ApprovalRow(
    id=7,
    run_id=4,
    step=2,
    call_id="c1",
    tool="edit_file",
    act=Act.WRITE,
    target="calc.py",
    content="x",
    preview="--- a\n+++ b\n",
    rule="calc.py",
    layer="project",
    agent_label="agent-5",
    status="pending",
    decided_by=None,
    reason=None,
    performed_target=None,
    performed_content=None,
    remembered=(),
    created_at="2025-06-01T09:00:01.000Z",
    resolved_at=None,
    goal="Fix the adder",
)
PENDING = [REQUEST]


def test_a_running_run_without_a_live_driver_is_crashed() -> None:
    running = replace(RUN, status="running", outcome=None)
    assert run_state(running, {4}) == "running"
    assert run_state(running, set()) == "crashed"
    assert run_state(RUN, set()) == "success"


@pytest.mark.parametrize(
    ("state", "groups"),
    [
        ("success", {"all", "succeeded"}),
        ("finished", {"all", "succeeded"}),
        ("awaiting_approval", {"all", "paused"}),
        ("crashed", {"all", "crashed"}),
        ("running", {"all", "running"}),
        ("step_cap_reached", {"all", "failed"}),
        ("cancelled", {"all", "failed"}),
    ],
)
def test_each_state_falls_in_its_quick_filters(state: str, groups: set[str]) -> None:
    names = ("all", "paused", "crashed", "running", "failed", "succeeded")
    assert {g for g in names if in_group(state, g)} == groups  # type: ignore[arg-type]


def test_the_text_filter_matches_every_word_in_id_goal_or_state() -> None:
    assert matches(RUN, "success", "adder")
    assert matches(RUN, "success", "FIX succ")
    assert matches(RUN, "success", "#4")
    assert not matches(RUN, "success", "adder paused")


def test_why_a_run_cannot_resume() -> None:
    paused = replace(RUN, status="paused", outcome="awaiting_approval")
    assert resume_refusal(paused, "awaiting_approval", None, PENDING) is None
    assert resume_refusal(paused, "awaiting_approval", Decision.approve(), PENDING) is None
    crashed = replace(RUN, status="running", outcome=None)
    assert resume_refusal(crashed, "crashed", None, []) is None
    assert resume_refusal(crashed, "crashed", Decision.approve(), []) == (
        "Run 4 has no pending decision to answer."
    )
    assert resume_refusal(crashed, "running", None, []) == (
        "Run 4 is being driven right now (here or by another process)."
    )
    assert resume_refusal(RUN, "success", None, []) == (
        "Run 4 has finished (success): there is nothing left to resume."
    )
    capped = replace(RUN, outcome="step_cap_reached", contract={"max_steps": 2})
    assert resume_refusal(capped, "step_cap_reached", None, []) == (
        "Run 4 stopped at its budget (2 of 2 steps): raise it to resume."
    )
    assert resume_refusal(capped, "step_cap_reached", None, [], {"max_steps": 2}) is not None
    assert resume_refusal(capped, "step_cap_reached", None, [], {"max_steps": 4}) is None
    # Tokens within its own budget: the tree's ceiling stopped it; raised, the run resumes.
    tree = {"token_budget": 99, "containment": {"max_total_tokens": 500}}
    ceiling = replace(RUN, outcome="cost_budget_exceeded", contract=tree)
    assert stopping_budget(ceiling, tree_tokens=620) == Budget("max_total_tokens", 620, 500)
    assert resume_refusal(ceiling, "cost_budget_exceeded", None, [], None, 620) == (
        "Run 4 stopped at its budget (620 of 500 tokens, the whole tree): raise it to resume."
    )
    raised = {"max_total_tokens": 1000}
    assert resume_refusal(ceiling, "cost_budget_exceeded", None, [], raised, 620) is None
    # Neither its own budget nor a ceiling it reached: nothing to raise.
    assert stopping_budget(ceiling) is None
    assert "short of any budget" in str(resume_refusal(ceiling, "cost_budget_exceeded", None, []))
    spent = replace(RUN, outcome="cost_budget_exceeded", contract={"token_budget": 8})
    assert stopping_budget(spent) == Budget("token_budget", 10, 8)
    child = replace(paused, id=5, parent_run_id=4)
    assert resume_refusal(child, "awaiting_approval", None, PENDING) == (
        "Run 5 is a sub-agent: resume its root run 4."
    )


def test_a_stored_request_is_shown_as_it_was_asked() -> None:
    row = REQUEST
    request = request_from_row(row)
    assert (request.request_id, request.run_id, request.step) == (7, 4, 2)
    assert (request.rule, request.layer, request.agent_label) == ("calc.py", "project", "agent-5")
    assert (request.goal, request.tool, request.preview) == (
        "Fix the adder",
        "edit_file",
        row.preview,
    )


def test_cells_never_read_markup_and_escape_control_characters() -> None:
    assert cell("[read calc.py] [/b]").plain == "[read calc.py] [/b]"
    assert cell("\x1b]2;x\x07").plain == "\\x1b]2;x\\x07"


def test_words_for_arguments_and_gate_evidence() -> None:
    assert arguments({"path": "calc.py", "argv": ["a", "b"]}) == 'path=calc.py argv=["a", "b"]'
    assert gate_detail("exited 1\nTraceback\n  File x\nAssertionError: no\n") == (
        "exited 1 … AssertionError: no"
    )
    assert gate_detail("") == ""


def test_the_cli_resumer_builds_the_stored_driver(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scenario = tmp_path / "s.json"
    scenario.write_text(json.dumps({"model": "stored-model", "turns": []}))
    driver = {"provider": "scripted", "scenario": str(scenario)}
    provider = stored_provider({"driver": driver, "max_retries": 1})
    assert (provider.name, provider.model) == ("scripted", "stored-model")
    for var in ("OPENROUTER_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    with pytest.raises(ConfigError, match="no provider configured"):
        stored_provider({"driver": {}})


def test_every_app_the_cli_opens_can_resume(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ioh_tui.tui.launch as launch_module
    from ioh_tui.cli import main

    specs: list[dict[str, Any]] = []

    def capture(store_path: Path, run: Any = None, **options: Any) -> int:
        specs.append(options)
        return 0

    monkeypatch.setattr(launch_module, "launch", capture)
    assert main(["--store", str(tmp_path / "s.db")]) == 0
    # The start screen's builds the stored driver as `options.stored_provider` does (importing
    # it only when a run is resumed: the app's first frame does not wait for it).
    scenario = tmp_path / "s.json"
    scenario.write_text(json.dumps({"model": "stored-model", "turns": []}))
    driver = {"provider": "scripted", "scenario": str(scenario)}
    provider = specs[0]["stored_provider"]({"driver": driver, "max_retries": 1})
    assert (provider.name, provider.model) == ("scripted", "stored-model")


def test_resume_in_the_app_continues_with_the_stored_provider(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import ioh_tui.tui.launch as launch_module
    from ioh_tui.cli import main
    from ioh_tui.engine import Resume
    from ioh_tui.tui.launch import AppRun

    scenario = tmp_path / "s.json"
    scenario.write_text(json.dumps({"model": "stored-model", "turns": []}))
    project = tmp_path / "p"
    project.mkdir()
    db = tmp_path / "s.db"
    exec_args = ["exec", "look", "--workspace", str(project), "--provider", "scripted"]
    assert main(["--store", str(db), *exec_args, "--scenario", str(scenario)]) == 0
    runs: list[AppRun] = []

    def capture(store_path: Path, run: AppRun, **options: Any) -> int:
        runs.append(run)
        return 0

    monkeypatch.setattr(launch_module, "launch", capture)
    assert main(["resume", "1", "--store", str(db)]) == 0
    assert runs[0].request == Resume(1)
    assert (runs[0].provider.name, runs[0].provider.model) == ("scripted", "stored-model")
    capsys.readouterr()
    # A workspace that is not the run's, or a run that does not exist: one line, status 2.
    assert main(["resume", "1", "--store", str(db), "--workspace", str(tmp_path)]) == 2
    assert main(["resume", "9", "--store", str(db)]) == 2
    errors = capsys.readouterr().err.splitlines()
    assert len(errors) == 2 and "not " in errors[0] and "no run with id 9" in errors[1]

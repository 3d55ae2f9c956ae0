"""`exec --continue RUN`: a new run whose model reads a stored run's conversation first.

Two real `exec` processes against the fake server on 127.0.0.1, which records what the model
was sent: the second run's first request must hold the first run's turns whole, then its own
goal.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ioh_tui.providers.testing.fake_server import FakeModelServer
from tests.fakes.provider_server import serving_in_thread
from tests.integration.cli.test_exec import ioh

TURNS: list[dict[str, Any]] = [
    {"text": "Reading.", "tool_calls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}]},
    {"text": "The notes say plum."},
    {"text": "Still plum."},
]


def _exec(model: FakeModelServer, store: Path, cwd: Path, *args: str) -> Any:
    provider = ["--provider", "compatible", "--base-url", model.base_url, "--model", "m"]
    options = ["--store", str(store), "--sandbox", "floor", "--json", *provider]
    return ioh("exec", *args, *options, cwd=cwd, env=dict(os.environ))


def _run_id(done: Any) -> int:
    return int(json.loads(done.stdout.splitlines()[0])["run_id"])


def test_a_continued_run_reads_the_earlier_conversation_then_its_goal(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "notes.txt").write_text("the word is plum\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    store = tmp_path / "runs.db"
    with serving_in_thread({"model": "m", "turns": TURNS}) as model:
        first = _exec(model, store, project, "what do the notes say?")
        assert first.returncode == 0, first.stderr
        before = len(model.requests)
        # From another directory, without --workspace: the run's own workspace is taken.
        second = _exec(model, store, elsewhere, "and now?", "--continue", str(_run_id(first)))
        assert second.returncode == 0, second.stderr
        chat = model.requests[before].body["messages"]
    said = [(m["role"], str(m.get("content") or "")) for m in chat]
    at = said.index(("user", "what do the notes say?"))
    assert said[at + 1] == ("assistant", "Reading.")
    assert said[at + 2][0] == "tool" and "the word is plum" in said[at + 2][1]
    assert said[at + 3] == ("assistant", "The notes say plum.")
    assert said[-1] == ("user", "and now?")
    shown = json.loads(ioh("show", str(_run_id(second)), "--store", str(store), "--json").stdout)
    assert shown["run"]["contract"]["continues"] == [_run_id(first)]
    assert shown["run"]["root"] == str(project.resolve())
    text = ioh("show", str(_run_id(second)), "--store", str(store)).stdout
    assert f"carries on the conversation of run(s) {_run_id(first)}" in text


def test_a_bad_continue_is_one_line_and_starts_nothing(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    other = tmp_path / "other"
    other.mkdir()
    store = tmp_path / "runs.db"
    with serving_in_thread({"model": "m", "turns": TURNS[1:]}) as model:
        first = _exec(model, store, project, "what do the notes say?")
        run = str(_run_id(first))
        cases = {
            ("--continue", "999"): "--continue 999: no run with id 999",
            ("--continue", "latest"): "--continue latest: give a run id",
            ("--continue", run, "--workspace", str(other)): f"run {run} worked in",
        }
        for extra, said in cases.items():
            done = _exec(model, store, project, "again", *extra)
            assert done.returncode == 2, (extra, done.stderr)
            assert done.stdout == "" and said in done.stderr
            assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
        listed = ioh("runs", "--store", str(store), "--json").stdout.splitlines()
    assert [json.loads(line)["run_id"] for line in listed] == [int(run)]


def test_the_app_builds_the_same_continued_run(tmp_path: Path) -> None:
    from ioh_tui.cli import build_parser
    from ioh_tui.cli.in_app import new_app_run
    from ioh_tui.engine import NewRun

    project = tmp_path / "project"
    project.mkdir()
    store = tmp_path / "runs.db"
    with serving_in_thread({"model": "m", "turns": TURNS[1:]}) as model:
        first = _run_id(_exec(model, store, project, "what do the notes say?"))
    scenario = tmp_path / "s.json"
    scenario.write_text(json.dumps({"turns": [{"text": "Yes."}]}))
    argv = ["run", "and now?", "--continue", f"run-{first}", "--store", str(store)]
    args = build_parser().parse_args([*argv, "--scenario", str(scenario), "--sandbox", "floor"])
    run, _ = new_app_run(args)
    assert isinstance(run.request, NewRun)
    assert run.request.continues == (first,)
    assert run.request.contract.root == project.resolve()

"""A project's own policy through `ioh-tui exec`: left out until agreed to, unless it only denies.

Run in-process through `main` (the real parser, policy, store and scripted model) with the
suite's private data and configuration directories, so the trust file is a real file.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from ioh_tui.cli import main
from ioh_tui.config.trust import TrustBook
from tests.integration.cli.test_exec import write_scenario

FIXED = "def add(a, b):\n    return a + b\n"
EDIT = {
    "name": "edit_file",
    "arguments": {"path": "calc.py", "old_text": "a - b", "new_text": "a + b"},
}
WIDENING = (
    '[[policy.layers]]\nname = "team"\n'
    'rules = [ { act = "write", effect = "allow", pattern = "calc.py" } ]\n'
)


def _exec(project: Path, tmp_path: Path, *extra: str) -> None:
    scenario = write_scenario(tmp_path / "s.json", {"tool_calls": [EDIT]}, {"text": "Done."})
    argv = ["exec", "fix add", "--workspace", str(project), "--scenario", str(scenario)]
    argv += ["--json", "--sandbox", "floor", "--store", str(tmp_path / "s.db"), *extra]
    main(argv)


def _config(project: Path, text: str) -> Path:
    path = project / ".ioh-tui" / "config.toml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(text)
    return path


def _events(out: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in out.splitlines()]


def test_an_unagreed_widening_project_policy_is_left_out_with_one_line(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _config(project, WIDENING)
    _exec(project, tmp_path)
    captured = capsys.readouterr()
    lines = [line for line in captured.err.splitlines() if "left out" in line]
    assert len(lines) == 1
    assert str(config) in lines[0] and "[policy]" in lines[0] and "--trust-project" in lines[0]
    asked = [e for e in _events(captured.out) if e["event"] == "approval_requested"]
    assert asked and asked[0]["layer"] is None  # the default tier asked: the allow was not used
    assert (project / "calc.py").read_text() != FIXED  # denied: nobody was there


def test_trust_project_uses_it_and_records_the_agreement(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _config(project, WIDENING)
    _exec(project, tmp_path, "--trust-project")
    captured = capsys.readouterr()
    assert "left out" not in captured.err
    assert not [e for e in _events(captured.out) if e["event"] == "approval_requested"]
    assert (project / "calc.py").read_text() == FIXED
    # Recorded: the next run uses it without the flag.
    assert TrustBook().untrusted(project, {"policy": tomllib.loads(WIDENING)["policy"]}) == []
    (project / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    _exec(project, tmp_path)
    assert "left out" not in capsys.readouterr().err
    assert (project / "calc.py").read_text() == FIXED


def test_a_changed_project_policy_is_left_out_again(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _config(project, WIDENING)
    _exec(project, tmp_path, "--trust-project")
    capsys.readouterr()
    _config(project, WIDENING.replace("calc.py", "*"))
    (project / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    _exec(project, tmp_path)
    assert "left out" in capsys.readouterr().err
    assert (project / "calc.py").read_text() != FIXED


def test_a_deny_only_project_policy_applies_unasked(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _config(
        project,
        '[[policy.layers]]\nname = "guard"\n'
        'rules = [ { act = "write", effect = "deny", pattern = "calc.py" } ]\n',
    )
    _exec(project, tmp_path, "--on-approval", "approve")
    captured = capsys.readouterr()
    assert "left out" not in captured.err
    (finished,) = [e for e in _events(captured.out) if e["event"] == "tool_call_finished"]
    assert finished["refused"] is True  # refused outright: an approver never saw it
    assert (project / "calc.py").read_text() != FIXED


def test_config_says_what_a_run_would_leave_out(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _config(project, WIDENING)
    assert main(["config", "--workspace", str(project), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["left_out"] == [{"section": "policy", "file": str(config)}]
    assert main(["config", "--workspace", str(project)]) == 0
    assert "[policy] left out" in capsys.readouterr().err

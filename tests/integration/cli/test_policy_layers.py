"""The configuration files' policies as layers of a run: deny-first across every layer, and every
refusal names the file its rule came from."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from ioh_tui.cli import main
from tests.integration.cli.test_exec import write_scenario

EDIT = {
    "name": "edit_file",
    "arguments": {"path": "calc.py", "old_text": "a - b", "new_text": "a + b"},
}
ORIGINAL = "def add(a, b):\n    return a - b\n"


def _rule(effect: str, pattern: str, name: str = "mine") -> str:
    return (
        f'[[policy.layers]]\nname = "{name}"\n'
        f'rules = [ {{ act = "write", effect = "{effect}", pattern = "{pattern}" }} ]\n'
    )


def _user_file(text: str) -> Path:
    user = Path(os.environ["XDG_CONFIG_HOME"]) / "ioh-tui" / "config.toml"
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text(text)
    return user


def _exec(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], *extra: str
) -> list[dict[str, Any]]:
    scenario = write_scenario(tmp_path / "s.json", {"tool_calls": [EDIT]}, {"text": "Done."})
    argv = ["exec", "fix", "--workspace", str(project), "--scenario", str(scenario), "--json"]
    argv += ["--sandbox", "floor", "--store", str(tmp_path / "s.db"), *extra]
    main(argv)
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def test_a_deny_in_the_user_file_beats_an_allow_on_the_command_line(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    user = _user_file(_rule("deny", "calc.py"))
    allow = tmp_path / "allow.toml"
    allow.write_text(_rule("allow", "*", name="cli"))
    events = _exec(project, tmp_path, capsys, "--policy", str(allow), "--on-approval", "approve")
    (finished,) = [e for e in events if e["event"] == "tool_call_finished"]
    assert finished["refused"] is True
    assert f"rule 'calc.py' in layer 'user:mine' of {user}" in finished["output"]
    assert not [e for e in events if e["event"] == "approval_requested"]
    assert (project / "calc.py").read_text() == ORIGINAL


def test_a_denied_ask_names_the_file_of_the_rule_that_asked(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    user = _user_file('[policy.defaults]\nwrite = "allow"\n' + _rule("ask", "calc.py"))
    events = _exec(project, tmp_path, capsys)
    (asked,) = [e for e in events if e["event"] == "approval_requested"]
    assert (asked["rule"], asked["layer"]) == ("calc.py", "user:mine")
    (finished,) = [e for e in events if e["event"] == "tool_call_finished"]
    assert f"(asked by rule 'calc.py' of {user})" in finished["output"]


def test_the_user_files_defaults_replace_the_tiers(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _user_file('[policy.defaults]\nwrite = "allow"\n')
    events = _exec(project, tmp_path, capsys)
    assert not [e for e in events if e["event"] == "approval_requested"]
    assert (project / "calc.py").read_text() != ORIGINAL

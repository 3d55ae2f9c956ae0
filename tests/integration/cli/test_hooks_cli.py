"""Hooks from the configuration files, as `ioh-tui exec` runs them: real processes, real files.

A project's hooks run only once the user agreed (`--trust-project` here); the user's own file
needs no agreement. What each hook did is in the event stream and in `ioh-tui show`.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from tests.integration.cli.test_exec import ioh, write_scenario

DENY_RM = """import json, sys
payload = json.load(sys.stdin)
if payload["arguments"]["argv"][:1] == ["rm"]:
    print(json.dumps({"decision": "deny", "reason": "the project keeps its files; use git rm"}))
"""
ADD = """import json, sys
payload = json.load(sys.stdin)
print(json.dumps({"add": "user hook saw " + payload["tool"]}))
"""


def project_hook(project: Path) -> None:
    (project / ".ioh-tui" / "hooks").mkdir(parents=True)
    (project / ".ioh-tui" / "hooks" / "deny_rm.py").write_text(DENY_RM)
    (project / ".ioh-tui" / "config.toml").write_text(
        "[[hooks.pre_tool]]\n"
        'match = "exec"\n'
        f'command = ["{sys.executable}", ".ioh-tui/hooks/deny_rm.py"]\n'
        "timeout_s = 20\n"
    )


def user_hook(project: Path) -> None:
    # The hook's script lives in the workspace: the sandbox shows it the workspace, not /tmp.
    (project / "user_add.py").write_text(ADD)
    config = Path(os.environ["XDG_CONFIG_HOME"]) / "ioh-tui" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(
        f'[[hooks.post_tool]]\nmatch = "exec"\ncommand = "{sys.executable} user_add.py"\n'
    )


def run_rm(project: Path, tmp_path: Path, *extra: str) -> tuple[int, list[dict[str, Any]], str]:
    scenario = write_scenario(
        tmp_path / "s.json",
        {"tool_calls": [{"name": "exec", "arguments": {"argv": ["rm", "calc.py"]}}]},
        {"text": "done"},
    )
    done = ioh(
        "exec",
        "tidy up",
        "--scenario",
        str(scenario),
        "--workspace",
        str(project),
        "--store",
        str(tmp_path / "runs.db"),
        "--on-approval",
        "approve",
        "--json",
        *extra,
    )
    events = [json.loads(line) for line in done.stdout.splitlines()]
    return done.returncode, events, done.stderr


def test_a_project_hook_runs_only_once_agreed_to(project: Path, tmp_path: Path) -> None:
    project_hook(project)
    status, events, stderr = run_rm(project, tmp_path)
    assert status == 0, stderr
    assert "[hooks] left out" in stderr and "--trust-project uses it" in stderr
    assert not (project / "calc.py").exists(), "unagreed hooks must not run"
    assert not [e for e in events if e["event"] == "hook_ran"]

    (project / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    status, events, stderr = run_rm(project, tmp_path, "--trust-project")
    assert status == 0, stderr
    assert (project / "calc.py").exists()
    (finished,) = [e for e in events if e["event"] == "tool_call_finished"]
    assert finished["refused"] and "the project keeps its files; use git rm" in finished["output"]
    (ran,) = [e for e in events if e["event"] == "hook_ran"]
    assert (ran["hook"], ran["outcome"], ran["tool"]) == ("pre_tool", "deny", "exec")

    run_id = events[0]["run_id"]
    shown = ioh("show", str(run_id), "--store", str(tmp_path / "runs.db"))
    assert "hook" in shown.stdout and "exec: deny — the project keeps its files" in shown.stdout
    trace = json.loads(
        ioh("show", str(run_id), "--json", "--store", str(tmp_path / "runs.db")).stdout
    )
    (refusal,) = [p for p in trace["policy_events"] if p["kind"] == "refusal"]
    assert refusal["source"].startswith("hook pre_tool#0") and refusal["layer"] == "hooks"


def test_the_users_hooks_need_no_agreement(project: Path, tmp_path: Path) -> None:
    user_hook(project)
    status, events, stderr = run_rm(project, tmp_path)
    assert status == 0, stderr
    (finished,) = [e for e in events if e["event"] == "tool_call_finished"]
    assert finished["output"].endswith("user hook saw exec")
    assert [e["outcome"] for e in events if e["event"] == "hook_ran"] == ["add"]


def test_a_resumed_run_uses_its_own_workspaces_hooks(project: Path, tmp_path: Path) -> None:
    project_hook(project)
    store = str(tmp_path / "runs.db")
    scenario = write_scenario(
        tmp_path / "s.json",
        {"tool_calls": [{"name": "exec", "arguments": {"argv": ["echo", "first"]}}]},
        {"tool_calls": [{"name": "exec", "arguments": {"argv": ["rm", "calc.py"]}}]},
        {"text": "done"},
    )
    started = ioh(
        "exec", "tidy up", "--scenario", str(scenario), "--workspace", str(project),
        "--store", store, "--on-approval", "defer", "--trust-project", "--json",
    )  # fmt: skip
    assert started.returncode == 4, started.stderr
    run_id = json.loads(started.stdout.splitlines()[0])["run_id"]
    # Resumed from elsewhere: the hooks are those of the run's workspace, not of the cwd.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = ioh(
        "resume", str(run_id), "--decide", "approve", "--headless", "--json",
        "--store", store, "--trust-project",
        cwd=elsewhere,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert (project / "calc.py").exists()
    events = [json.loads(line) for line in done.stdout.splitlines()]
    denied = [e for e in events if e["event"] == "hook_ran" and e["outcome"] == "deny"]
    assert [e["tool"] for e in denied] == ["exec"]

"""Every way the app drives a run runs it under its workspace's hooks and MCP servers.

`ioh-tui run` (both, not one replacing the other), `ioh-tui resume` in the app (the stored run's
workspace, not the current directory), and a run resumed from the app's run browser or queue.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from ioh_tui.engine import Resume
from ioh_tui.tui.launch import AppRun

HOOK = '[[hooks.pre_tool]]\nmatch = "exec"\ncommand = ["true"]\n'


def project(root: Path) -> Path:
    """A project whose own file declares a hook and an MCP server (agreed with --trust-project)."""
    (root / ".ioh-tui").mkdir(parents=True)
    (root / ".ioh-tui" / "config.toml").write_text(
        f'{HOOK}\n[mcp.servers.fx]\ncommand = "{sys.executable}"\nargs = ["server.py"]\n'
    )
    return root


def captured(monkeypatch: pytest.MonkeyPatch) -> list[tuple[AppRun | None, dict[str, Any]]]:
    import ioh_tui.tui.launch as launch_module

    calls: list[tuple[AppRun | None, dict[str, Any]]] = []

    def capture(store_path: Path, run: AppRun | None = None, **options: Any) -> int:
        calls.append((run, options))
        return 0

    monkeypatch.setattr(launch_module, "launch", capture)
    return calls


def test_run_in_the_app_gets_both_hooks_and_servers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ioh_tui.cli import main

    calls = captured(monkeypatch)
    ws = project(tmp_path / "ws")
    scenario = tmp_path / "s.json"
    scenario.write_text(json.dumps({"turns": []}))
    argv = ["run", "look", "--workspace", str(ws), "--scenario", str(scenario)]
    assert main(["--store", str(tmp_path / "s.db"), *argv, "--trust-project"]) == 0
    run, _ = calls[0]
    assert run is not None and run.hooks and [s.name for s in run.mcp] == ["fx"]


def test_resume_in_the_app_uses_the_stored_runs_workspace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ioh_tui.cli import main

    ws = project(tmp_path / "ws")
    scenario = tmp_path / "s.json"
    scenario.write_text(json.dumps({"turns": []}))
    db = tmp_path / "s.db"
    exec_args = ["exec", "look", "--workspace", str(ws), "--scenario", str(scenario)]
    assert main(["--store", str(db), *exec_args, "--trust-project"]) == 0
    calls = captured(monkeypatch)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # the project file is the run's, not the current directory's
    assert main(["resume", "1", "--store", str(db)]) == 0
    run, options = calls[0]
    assert run is not None and run.hooks and [s.name for s in run.mcp] == ["fx"]
    # And a run resumed later from the app's browser or queue gets the same.
    resumer = options["extensions"]
    hooks, servers = resumer(ws.resolve())
    assert hooks and [s.name for s in servers] == ["fx"]


def test_the_apps_resumer_builds_the_runs_extensions(tmp_path: Path) -> None:
    from ioh_tui.engine import TaskContract
    from ioh_tui.hooks import HookSet
    from ioh_tui.providers import ScriptedProvider
    from ioh_tui.providers.testing.scenario import parse_scenario
    from ioh_tui.tui.launch import _resumer

    seen: list[Path] = []
    hooks = HookSet.from_config({"pre_tool": [{"match": "exec", "command": ["true"]}]})

    def extensions(root: Path) -> tuple[HookSet, tuple[Any, ...]]:
        seen.append(root)
        return hooks, ()

    resumer = _resumer(lambda _: ScriptedProvider(parse_scenario({"turns": []})), None, extensions)
    assert resumer is not None
    contract = TaskContract.workspace("g", tmp_path).to_dict()
    run = resumer(Resume(7), contract)
    assert seen == [tmp_path.resolve()] and run.hooks is hooks


def test_resume_in_the_app_asks_about_the_projects_hooks_and_servers_not_its_policy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ioh_tui.cli import main

    ws = project(tmp_path / "ws")
    with (ws / ".ioh-tui" / "config.toml").open("a") as file:
        file.write(
            '\n[[policy.layers]]\nname = "team"\n'
            'rules = [ { act = "write", effect = "allow", pattern = "*" } ]\n'
        )
    scenario = tmp_path / "s.json"
    scenario.write_text(json.dumps({"turns": []}))
    db = tmp_path / "s.db"
    exec_args = ["exec", "look", "--workspace", str(ws), "--scenario", str(scenario)]
    assert main(["--store", str(db), *exec_args]) == 0  # nothing agreed: all left out
    calls = captured(monkeypatch)
    monkeypatch.chdir(tmp_path)
    assert main(["resume", "1", "--store", str(db)]) == 0
    run, options = calls[0]
    assert run is not None and not run.hooks and not run.mcp
    trust = options["trust"]
    # The resumed run keeps its stored policy, so only what it would start is asked about.
    assert [section.kind for section in trust.sections] == ["hooks", "mcp:fx"]
    for section in trust.sections:
        trust.agree(section.kind)
    agreed = trust.rebuild()
    assert agreed.hooks and [s.name for s in agreed.mcp] == ["fx"]

"""Hooks and skills in the app: each hook's run and each skill load is a line of the transcript.

The real app over the real engine: a scripted model, a real hook process in the real sandbox.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from textual.widgets import Static

from ioh_tui.engine import NewRun, Parts, TaskContract, start
from ioh_tui.hooks import HookSet
from ioh_tui.policy import Policy
from ioh_tui.sandbox import select
from ioh_tui.store import Store
from ioh_tui.tui.app_run import AppRun
from ioh_tui.tui.factory import make_app
from ioh_tui.tui.history import History
from ioh_tui.tui.traces import decision_rows
from tests.tui.harness import calc_project, finished, run_screen, scripted

DENY = """import json, sys
json.load(sys.stdin)
print(json.dumps({"decision": "deny", "reason": "no commands in this project"}))
"""


async def test_hook_decisions_skill_loads_and_skill_warnings_are_transcript_lines(
    tmp_path: Path,
) -> None:
    project = calc_project(tmp_path / "project")
    (project / "deny.py").write_text(DENY)
    skills = project / ".ioh-tui" / "skills"
    (skills / "checks").mkdir(parents=True)
    (skills / "checks" / "SKILL.md").write_text(
        "---\nname: checks\ndescription: how to check\n---\nRun check_calc.py.\n"
    )
    (skills / "broken").mkdir()
    (skills / "broken" / "SKILL.md").write_text("no front matter\n")
    hooks = HookSet.from_config(
        {"pre_tool": [{"match": "exec", "command": [sys.executable, "deny.py"]}]}
    )
    turns: list[dict[str, Any]] = [
        {"tool_calls": [{"name": "skill", "arguments": {"name": "checks"}}]},
        {"tool_calls": [{"name": "exec", "arguments": {"argv": ["rm", "calc.py"]}}]},
        {"text": "done"},
    ]
    run = AppRun(
        NewRun(TaskContract.workspace("work", project)),
        scripted(*turns),
        Policy.permissive(),
        select("auto"),
        label="scripted test model",
        hooks=hooks,
    )
    app = make_app(tmp_path / "store.db", run, remember_file=tmp_path / "remembered.toml")
    app.animation_level = "none"
    async with app.run_test(size=(120, 40)) as pilot:
        await finished(pilot)
        screen = run_screen(app)

        def lines(selector: str) -> list[str]:
            return [str(n.content) for n in screen.query(selector).results(Static)]

        (hook,) = lines(".note.-hook")
        assert hook.startswith("hook pre_tool#0 (")
        assert hook.endswith("on exec → deny: no commands in this project")
        (skill,) = lines(".note.-skill")
        assert skill.startswith("skill: loaded checks (") and skill.endswith("SKILL.md)")
        (warning,) = lines(".note.-warning")
        assert "broken/SKILL.md: skipped, no front matter" in warning
    assert (project / "calc.py").exists()
    assert screen.outcome == "finished"


ANSWER = """import json, sys
payload = json.load(sys.stdin)
print(json.dumps({"decision": payload["arguments"]["argv"][1], "reason": "hook policy"}))
"""


async def test_the_trace_names_the_hook_as_the_decider(tmp_path: Path) -> None:
    project = calc_project(tmp_path / "project")
    (project / "answer.py").write_text(ANSWER)
    hooks = HookSet.from_config({"pre_tool": [{"command": [sys.executable, "answer.py"]}]})
    turns: list[dict[str, Any]] = [
        {"tool_calls": [{"name": "exec", "arguments": {"argv": ["echo", "allow"]}}]},
        {"tool_calls": [{"name": "exec", "arguments": {"argv": ["echo", "deny"]}}]},
        {"text": "done"},
    ]
    async with Store.open(tmp_path / "store.db") as store:
        result = await start(
            NewRun(TaskContract.workspace("work", project)),
            Parts(scripted(*turns), store, sandbox=select("auto"), hooks=hooks),
        )
    assert result.outcome == "finished", result.detail
    trace = await History(tmp_path / "store.db").trace(result.run_id)
    rows = [(r[0], r[1], r[3], r[4]) for r in decision_rows(trace)]
    # Under the default tiers `echo` asks: the hook's allow answered it, then its deny refused.
    assert rows == [("1", "exec", "approved", "hook"), ("2", "exec", "refused", "hook")]

"""Rules that last, in the app: remembered for the project or the user from the decision modal,
used by the next run, listed and revoked on the rules screen.

The next run is a real `ioh-tui exec` (in-process `main`) over the same files, so what the modal
saved is what a later run loads.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from textual.binding import Binding
from textual.widgets import DataTable

from ioh_tui.tui.app import IohApp
from ioh_tui.tui.factory import make_app
from ioh_tui.tui.screens.approval import ApprovalModal
from ioh_tui.tui.screens.help import help_sections
from ioh_tui.tui.screens.rules import RulesScreen
from ioh_tui.tui.screens.start import StartScreen
from tests.integration.cli.test_exec import ioh, write_scenario
from tests.tui.harness import USAGE, build, finished, modal, until


def write(path: str, content: str) -> dict[str, object]:
    return {
        "tool_calls": [{"name": "write_file", "arguments": {"path": path, "content": content}}],
        "usage": USAGE,
    }


def _exec_write(workspace: Path, tmp_path: Path) -> list[dict[str, Any]]:
    """The same write in a later headless run (a real process); the events it printed."""
    scenario = write_scenario(tmp_path / "again.json", write("a.txt", "2"), {"text": "done"})
    argv = ["exec", "again", "--workspace", str(workspace), "--scenario", str(scenario)]
    argv += ["--json", "--sandbox", "floor", "--store", str(tmp_path / "exec.db")]
    done = ioh(*argv)
    return [json.loads(line) for line in done.stdout.splitlines()]


def _asked(events: list[dict[str, Any]]) -> bool:
    return any(e["event"] == "approval_requested" for e in events)


async def _remember(tmp_path: Path, scope: str) -> tuple[Path, str]:
    """Answer the run's write with "remember" at `scope`; the project and the preview shown."""
    app = build(tmp_path, write("a.txt", "1"), {"text": "done"}, criterion=None)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await modal(pilot)
        await pilot.press("a")
        await pilot.click(f"#scope-{scope}")
        preview = str(screen.query_one("#remember-preview").render())
        await pilot.press("ctrl+s")
        await finished(pilot)
    assert app.result is not None and app.result.remembered == ("write allow a.txt",)
    return tmp_path / "project", preview


async def test_a_project_rule_stops_the_ask_next_run_and_the_rules_screen_revokes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project, preview = await _remember(tmp_path, "project")
    saved = project.resolve() / ".ioh-tui" / "policy.toml"
    assert f"write allow a.txt — this run and this project's later runs: saved to {saved}" in (
        preview
    )
    assert not _asked(_exec_write(project, tmp_path))
    assert (project / "a.txt").read_text() == "2"

    monkeypatch.chdir(project)  # the start screen's rules are the current directory's
    app = make_app(tmp_path / "store.db")
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, StartScreen))
        await pilot.press("l")
        await until(pilot, lambda: isinstance(app.screen, RulesScreen))
        screen = app.screen
        assert isinstance(screen, RulesScreen)
        table = screen.query_one(DataTable)
        rows = [[str(cell) for cell in table.get_row_at(i)] for i in range(table.row_count)]
        (row,) = [i for i, r in enumerate(rows) if r[1] == "project:remembered"]
        assert rows[row][2] == "write allow a.txt" and rows[row][3] == str(saved)
        await pilot.press(*["down"] * row, "x")
        await pilot.pause()
        assert "a.txt" not in saved.read_text()
        assert "project:remembered" not in [
            str(table.get_row_at(i)[1]) for i in range(table.row_count)
        ]
    assert _asked(_exec_write(project, tmp_path))  # asked again once revoked


async def test_a_user_rule_is_saved_absolute_and_holds_only_in_its_project(
    tmp_path: Path,
) -> None:
    project, preview = await _remember(tmp_path, "user")
    absolute = f"{project.resolve()}/a.txt"
    user_file = Path(os.environ["XDG_CONFIG_HOME"]) / "ioh-tui" / "policy.toml"
    assert f"write allow {absolute} — this run and every later run, any project" in preview
    assert f'pattern = "{absolute}"' in user_file.read_text()
    assert not _asked(_exec_write(project, tmp_path))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert _asked(_exec_write(elsewhere, tmp_path))  # not a.txt in every project


def test_the_rules_key_is_on_the_help_screen() -> None:
    sections = dict(help_sections(IohApp.BINDINGS))
    everywhere = [b for b in sections["Everywhere"] if isinstance(b, Binding)]
    assert any(b.key == "l" and b.action == "rules" for b in everywhere)
    assert any(isinstance(b, Binding) and b.key == "x" for b in sections["Rules"])


async def test_the_rules_screen_opens_from_the_run_view_on_the_runs_workspace(
    tmp_path: Path,
) -> None:
    app = build(tmp_path, {"text": "done"}, criterion=None)
    async with app.run_test(size=(120, 40)) as pilot:
        await finished(pilot)
        await pilot.press("l")
        await until(pilot, lambda: isinstance(app.screen, RulesScreen))
        assert isinstance(app.screen, RulesScreen)
        assert app.screen.workspace == tmp_path / "project"
        assert not isinstance(app.screen, ApprovalModal)


async def test_rules_remembered_for_this_run_are_listed_as_such_and_not_revoked(
    tmp_path: Path,
) -> None:
    app = build(tmp_path, write("a.txt", "1"), {"text": "done"}, criterion=None)
    async with app.run_test(size=(140, 40)) as pilot:
        await modal(pilot)
        await pilot.press("a")
        await pilot.click("#scope-run")
        await pilot.press("ctrl+s")
        await finished(pilot)
        await pilot.press("l")
        await until(pilot, lambda: isinstance(app.screen, RulesScreen))
        screen = app.screen
        assert isinstance(screen, RulesScreen)
        table = screen.query_one(DataTable)
        rows = [[str(cell) for cell in table.get_row_at(i)] for i in range(table.row_count)]
        (row,) = [i for i, r in enumerate(rows) if r[1] == "this run"]
        assert rows[row][2] == "write allow a.txt"
        await pilot.press(*["down"] * row, "x")
        await pilot.pause()
        shown = [str(n.message) for n in app._notifications]
        assert any("holds until that run ends" in text for text in shown)
    # Nothing was saved for later runs.
    assert not (tmp_path / "project" / ".ioh-tui" / "policy.toml").exists()

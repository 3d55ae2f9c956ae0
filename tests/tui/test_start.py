"""The start screen, the factory's refusals, and the launch entry point."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.widgets import DataTable

from ioh_tui.core.errors import ConfigError
from ioh_tui.engine import NewRun, Resume, TaskContract, run
from ioh_tui.policy import DeferAll
from ioh_tui.sandbox import select
from ioh_tui.store import Store
from ioh_tui.tui import factory
from ioh_tui.tui.app import IohApp
from ioh_tui.tui.app_run import AppRun, given
from ioh_tui.tui.factory import make_app
from ioh_tui.tui.screens.start import StartScreen
from tests.tui.fakes import GatedProvider
from tests.tui.harness import (
    CHECK,
    FIX_CALC,
    FIXED,
    USAGE,
    build,
    calc_project,
    finished,
    modal,
    run_screen,
    scripted,
    until,
)


async def paused_run(tmp_path: Path) -> Path:
    """A store holding one run paused on a deferred write."""
    db = tmp_path / "store.db"
    project = calc_project(tmp_path / "project")
    async with Store.open(db) as store:
        result = await run(
            TaskContract.workspace("make add add", project, CHECK),
            scripted({"tool_calls": [FIX_CALC], "usage": USAGE}),
            store=store,
            approver=DeferAll(),
            sandbox=select("floor"),
        )
    assert result.outcome == "awaiting_approval"
    return db


def start_app(db: Path) -> IohApp:
    app = make_app(db)
    app.animation_level = "none"
    return app


async def test_the_start_screen_lists_pending_decisions_and_recent_runs(tmp_path: Path) -> None:
    app = start_app(await paused_run(tmp_path))
    async with app.run_test(size=(100, 30)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, StartScreen)
        pending = screen.query_one("#start-pending", DataTable)
        runs = screen.query_one("#start-runs", DataTable)
        assert [str(c) for c in pending.get_row_at(0)[2:4]] == ["write", "calc.py"]
        assert [str(c) for c in runs.get_row_at(0)[1:3]] == ["make add add", "awaiting_approval"]


async def test_without_a_model_it_says_how_to_configure_one(tmp_path: Path) -> None:
    app = start_app(tmp_path / "absent.db")
    async with app.run_test(size=(100, 30)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        hint = str(app.screen.query_one("#start-model").render())
        for var in ("OPENROUTER_API_KEY", "ANTHROPIC_MODEL", "OPENAI_API_KEY"):
            assert var in hint
        assert not (tmp_path / "absent.db").exists()  # looking never creates a store
        await pilot.press("q")
    assert app.exit_status == 0


async def test_a_configured_model_is_named_but_its_key_never_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-secret-value")
    monkeypatch.setenv("ANTHROPIC_MODEL", "claude-test")
    app = start_app(tmp_path / "absent.db")
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        text = str(app.screen.query_one("#start-model").render())
        svg = app.export_screenshot()
    assert "Anthropic · claude-test" in text
    assert "sk-secret-value" not in svg


def test_the_factory_refuses_the_demo_when_the_build_has_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(factory, "demo_source", lambda: None)
    with pytest.raises(ConfigError, match="demo is not available"):
        make_app(tmp_path / "s.db", demo=True)
    assert make_app(tmp_path / "s.db").config.demo is None  # the start screen offers none


async def test_the_demo_opens_as_a_tree_request() -> None:
    source = factory.demo_source()
    assert source is not None
    async with source() as demo:
        assert isinstance(demo.request, NewRun) and demo.request.containment is not None
        assert demo.label == "scripted demo model"


async def test_resume_asks_the_pending_decision_again_and_continues(tmp_path: Path) -> None:
    db = await paused_run(tmp_path)
    app = make_app(
        db,
        AppRun(
            Resume(1),
            scripted({"tool_calls": [FIX_CALC], "usage": USAGE}),
            sandbox=select("floor"),
        ),
    )
    app.animation_level = "none"
    async with app.run_test(size=(100, 30)) as pilot:
        await modal(pilot)
        await pilot.press("y")
        await finished(pilot)
    assert app.result is not None and app.result.outcome == "success"
    assert (tmp_path / "project" / "calc.py").read_text() == FIXED


async def test_d_on_the_start_screen_starts_the_demo(tmp_path: Path) -> None:
    project = calc_project(tmp_path / "project")
    app = start_app(tmp_path / "store.db")
    # The demo's parts, swapped for a scripted run of the calc project (no server, no copy).
    app.config.demo = given(
        AppRun(
            NewRun(TaskContract.workspace("demo goal", project)),
            scripted({"text": "Demo says hi.", "usage": USAGE}),
            sandbox=select("floor"),
            label="scripted demo model",
        )
    )
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await pilot.press("d")
        await until(pilot, lambda: app.run_screen is not None)
        await finished(pilot)
        screen = run_screen(app)
        assert app.screen is screen and screen.status.facts[0] == "scripted demo model"
        # Ended, esc goes back to the start screen, which now lists the run.
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, StartScreen))
        start = app.screen
        assert isinstance(start, StartScreen) and app.run_screen is None
        # Read again on resuming, in a worker the screen starts once it is shown.
        await until(pilot, lambda: bool(start.recent))
        await pilot.pause()
        runs = start.query_one("#start-runs", DataTable)
        assert any("demo goal" in str(c) for c in runs.get_row_at(0))
    assert app.result is not None and app.result.outcome == "finished"


async def test_esc_stops_a_running_run_and_once_it_ended_opens_the_start_screen(
    tmp_path: Path,
) -> None:
    provider = GatedProvider(["Thinking it over."])
    app = build(tmp_path, provider=provider, criterion=None)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: provider.waiting)
        await pilot.press("escape", "y")  # running: stops it once confirmed, stays in the view
        await finished(pilot)
        assert app.result is not None and app.result.outcome == "cancelled"
        assert app.screen is run_screen(app)
        await pilot.press("escape")  # launched on a run: the start screen opens over it
        await until(pilot, lambda: isinstance(app.screen, StartScreen))


async def test_the_start_screen_of_ioh_tui_store_shows_two_deferred_decisions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "store.db"
    goals = ["make add add", "fix the adder again"]
    async with Store.open(db) as store:
        for i, goal in enumerate(goals):
            project = calc_project(tmp_path / f"project{i}")
            result = await run(
                TaskContract.workspace(goal, project, CHECK),
                scripted({"tool_calls": [FIX_CALC], "usage": USAGE}),
                store=store,
                approver=DeferAll(),
                sandbox=select("floor"),
            )
            assert result.outcome == "awaiting_approval"
    # `ioh-tui --store F`: the command line builds a start-screen spec for that store.
    import ioh_tui.tui.launch as launch_module
    from ioh_tui.cli import main

    opened: list[tuple[Path, AppRun | None, bool]] = []

    def capture(store_path: Path, run: AppRun | None = None, **options: Any) -> int:
        opened.append((store_path, run, options.get("demo", False)))
        return 0

    monkeypatch.setattr(launch_module, "launch", capture)
    assert main(["--store", str(db)]) == 0
    (store_path, on_run, demo) = opened[0]
    assert (store_path, on_run, demo) == (db, None, False)  # the start screen
    app = make_app(store_path)
    app.animation_level = "none"
    async with app.run_test(size=(120, 30)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, StartScreen)
        pending = screen.query_one("#start-pending", DataTable)
        rows = [[str(c) for c in pending.get_row_at(i)] for i in range(pending.row_count)]
    assert len(rows) == 2
    assert sorted(row[5] for row in rows) == sorted(goals)
    assert all(row[2:4] == ["write", "calc.py"] for row in rows)

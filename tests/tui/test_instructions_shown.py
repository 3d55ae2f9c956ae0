"""The run view says which project instructions file was pinned into every request."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static

from tests.tui.harness import build, calc_project, finished, run_screen


async def test_the_run_view_names_the_instructions_file(tmp_path: Path) -> None:
    (calc_project(tmp_path / "project") / "AGENTS.md").write_text("Use tabs.\n")
    app = build(tmp_path, {"text": "done"}, criterion=None)
    async with app.run_test(size=(140, 40)) as pilot:
        await finished(pilot)
        facts = str(run_screen(app).query_one("#run-facts", Static).render())
    assert "instructions: AGENTS.md (pinned in every request)" in facts


async def test_no_instructions_line_without_a_file(tmp_path: Path) -> None:
    app = build(tmp_path, {"text": "done"}, criterion=None)
    async with app.run_test(size=(140, 40)) as pilot:
        await finished(pilot)
        facts = str(run_screen(app).query_one("#run-facts", Static).render())
    assert "model:" in facts and "instructions:" not in facts

"""The demo's defer: its decision, deferred in the app, is answered later and the run finishes.

The real demo (its loopback model server, its copied project, the real sandbox and store) runs in
the app; the later answer comes from the command line (a real subprocess) or the start screen.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ioh_tui.cli.options import stored_provider
from ioh_tui.demo.home import MARKER, WAITING, settle
from ioh_tui.engine import Resume, TaskContract
from ioh_tui.store import Store
from ioh_tui.tui.app_run import AppRun
from ioh_tui.tui.factory import make_app
from ioh_tui.tui.screens.answer import StoredApprovalModal
from ioh_tui.tui.screens.run import RunScreen
from ioh_tui.tui.screens.start import StartScreen
from tests.tui.harness import finished, modal, run_screen, until

SIZE = (120, 36)


async def defer_the_demo(db: Path) -> tuple[int, Path]:
    """Run the demo in the app and defer its decision (`d`); the run's id and workspace."""
    app = make_app(db, demo=True)
    async with app.run_test(size=SIZE) as pilot:
        await modal(pilot)
        await pilot.press("d")
        await finished(pilot)
    assert app.result is not None and app.result.outcome == "awaiting_approval"
    async with Store.open(db) as store:
        row = await store.run(app.result.run_id)
        (pending,) = await store.approvals(app.result.run_id, pending_only=True)
    assert pending.target == "calc.py"
    return app.result.run_id, TaskContract.from_dict(row.contract).root


async def status_of(db: Path, run_id: int) -> tuple[str, str | None]:
    async with Store.open(db) as store:
        row = await store.run(run_id)
    return row.status, row.outcome


@pytest.mark.slow
async def test_a_deferred_demo_keeps_its_workspace_and_resume_decide_approve_finishes_it(
    tmp_path: Path,
) -> None:
    db = tmp_path / "store.db"
    run_id, workspace = await defer_the_demo(db)
    home = workspace.parent
    # The decision waits: the workspace (the demo's unfixed project) and its scenario are kept.
    assert "return a - b" in (workspace / "calc.py").read_text()
    assert (home / WAITING).is_file() and (home / "scenario.json").is_file()
    argv = [sys.executable, "-m", "ioh_tui", "resume", str(run_id), "--decide", "approve"]
    done = await asyncio.to_thread(
        subprocess.run,
        [*argv, "--headless", "--store", str(db)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert f"run {run_id} success" in done.stdout
    # The scripted model was rebuilt from the stored driver and played the rest of the scenario.
    assert "[scripted scripted-demo-model, sandbox" in done.stderr
    assert await status_of(db, run_id) == ("completed", "success")
    assert not home.exists()  # ended for good: the demo's directory is gone


@pytest.mark.slow
async def test_a_deferred_demo_is_answered_from_the_start_screen(tmp_path: Path) -> None:
    db = tmp_path / "store.db"
    run_id, workspace = await defer_the_demo(db)
    assert workspace.is_dir()

    def resumer(request: Resume, contract: dict[str, Any]) -> AppRun:
        return AppRun(request, stored_provider(contract))  # as `ioh-tui` builds it

    app = make_app(db, resumer=resumer)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: isinstance(app.screen, StartScreen))
        await app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press("enter")  # the pending decision is the first row, focused
        ask = await modal(pilot)
        assert isinstance(ask, StoredApprovalModal) and ask.request.run_id == run_id
        await pilot.press("y")
        await until(pilot, lambda: isinstance(app.screen, RunScreen))
        await until(pilot, lambda: run_screen(app).outcome is not None, within=60)
        await until(pilot, lambda: not app.running)
        assert app.result is not None and app.result.outcome == "success"
        assert run_screen(app).status.facts[0] == "scripted-demo-model via scripted"
    assert await status_of(db, run_id) == ("completed", "success")
    assert not workspace.parent.exists()


def test_settle_leaves_a_workspace_that_is_not_the_demos_alone(tmp_path: Path) -> None:
    # A project laid out like the demo's, even with the marker, is not in the temporary directory.
    home = tmp_path / "ioh-tui-demo-lookalike"
    (home / "workspace").mkdir(parents=True)
    (home / MARKER).write_text("not ours\n")
    settle(home / "workspace", "success")
    assert (home / "workspace").is_dir()

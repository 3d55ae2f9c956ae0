"""SVG snapshots of the run browser and the trace view over a store of real scripted runs.

The store's timestamps and workspace paths are normalised (`stored_runs.normalise`), so the
pictures do not depend on the clock or on the temporary directory.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from ioh_tui.tui.app import IohApp
from ioh_tui.tui.factory import make_app
from ioh_tui.tui.screens.runs import RunBrowserScreen
from ioh_tui.tui.screens.trace import TraceScreen
from tests.snapshots.test_snapshots import SIZE, SnapCompare, steady
from tests.tui.harness import until
from tests.tui.stored_runs import history, normalise

pytestmark = pytest.mark.snapshot


def history_app(tmp_path: Path) -> IohApp:
    """The start screen over the stored history, with fixed timestamps and paths."""
    db = asyncio.run(history(tmp_path))
    normalise(db, tmp_path)
    app = make_app(db)
    app.animation_level = "none"
    return app


async def in_browser(pilot: Pilot[Any]) -> None:
    await pilot.app.workers.wait_for_complete()
    await pilot.press("b")
    await until(pilot, lambda: isinstance(pilot.app.screen, RunBrowserScreen))
    await pilot.app.workers.wait_for_complete()
    steady(pilot)
    await pilot.pause()


def trace_of_run_1(section: str) -> Callable[[Pilot[Any]], Awaitable[None]]:
    """Open run 1's trace from the browser and show one of its sections."""

    async def go(pilot: Pilot[Any]) -> None:
        await in_browser(pilot)
        await pilot.press("down", "down", "down", "down", "enter")  # run 1: the oldest, last
        await until(pilot, lambda: isinstance(pilot.app.screen, TraceScreen))
        await pilot.app.workers.wait_for_complete()
        await pilot.press(section)
        await pilot.pause()

    return go


class TestRunBrowser:
    def test_all_runs(self, snap_compare: SnapCompare, tmp_path: Path) -> None:
        """You should see `Runs`, the filter field and `state: all`, then five root runs newest
        first: 7 `interrupted survey` crashed, 6 `fix the adder again` awaiting_approval, 5
        `read forever` step_cap_reached, 2 `split the survey` finished, 1 `make add add` success,
        with steps, tokens, cost `—` and start times 2025-06-01 09:0N; under the table
        `5 of 5 runs` and the keys."""
        assert snap_compare(history_app(tmp_path), terminal_size=SIZE, run_before=in_browser)

    def test_filtered_to_paused(self, snap_compare: SnapCompare, tmp_path: Path) -> None:
        """You should see the state filter at `state: paused` and only run 6, `fix the adder
        again`, awaiting_approval; `1 of 5 runs`."""

        async def paused(pilot: Pilot[Any]) -> None:
            await in_browser(pilot)
            await pilot.press("f")
            await pilot.pause()

        assert snap_compare(history_app(tmp_path), terminal_size=SIZE, run_before=paused)


class TestTraceView:
    def test_decisions(self, snap_compare: SnapCompare, tmp_path: Path) -> None:
        """You should see run 1's header in green (`make add add`, success · 2 steps · 1.9k
        tokens · cost unknown, test-model via scripted, the gate's command), the Decisions tab
        open: step 1 read README.md refused by policy (rule README.md, layer project), step 2
        write calc.py approved by the approver (rule calc.py, layer project)."""
        assert snap_compare(
            history_app(tmp_path), terminal_size=SIZE, run_before=trace_of_run_1("2")
        )

    def test_gate_attempts(self, snap_compare: SnapCompare, tmp_path: Path) -> None:
        """You should see the Gate tab: step 1 `✗ failed` with `… exited 1 (expected 0) …
        AssertionError: add is wrong`, step 2 `● passed` with `… exited 0`."""
        assert snap_compare(
            history_app(tmp_path), terminal_size=SIZE, run_before=trace_of_run_1("3")
        )

    def test_steps(self, snap_compare: SnapCompare, tmp_path: Path) -> None:
        """You should see the Steps tab: step 1 `read calc.py` ✓ ok and `read README.md`
        ⊘ refused, step 2 `edit calc.py` with its arguments summarised, ✓ ok."""
        assert snap_compare(
            history_app(tmp_path), terminal_size=SIZE, run_before=trace_of_run_1("1")
        )

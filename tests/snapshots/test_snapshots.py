"""SVG snapshots of the app (update with `make snapshots-update` after looking at the report)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, TextArea

from ioh_tui.services import ProcessSample
from ioh_tui.tui.app import IohApp
from ioh_tui.tui.factory import make_app
from ioh_tui.tui.widgets import processes
from ioh_tui.tui.widgets.file_changes import FileChanges
from ioh_tui.tui.widgets.processes import Processes
from ioh_tui.tui.widgets.tool_call import ToolCall
from tests.snapshots.apps.calc_run import fixing_app, running_app
from tests.tui.harness import finished, modal, run_screen, until

SnapCompare = Callable[..., bool]
SIZE = (100, 32)
"""The suite's terminal size (the narrow test uses its own)."""

pytestmark = pytest.mark.snapshot


def steady(pilot: Pilot[Any]) -> None:
    """No blinking cursors in pictures."""
    for widget in pilot.app.screen.query("Input, TextArea"):
        if isinstance(widget, Input | TextArea):
            widget.cursor_blink = False


async def command_running(pilot: Pilot[Any]) -> None:
    app = pilot.app
    assert isinstance(app, IohApp)
    await until(pilot, lambda: any("test_add" in c.live for c in run_screen(app).query(ToolCall)))
    await pilot.pause()


class TestRunView:
    def test_running(self, snap_compare: SnapCompare, tmp_path: Path) -> None:
        """You should see step 1 (text, `read calc.py`, a failed gate in red) and step 2 running
        `python3 -B slow_tests.py` with its live tail, meters 2 / 8 steps and 1.9k / 4.0k
        tokens, the gate badge `✗ failed`, and the status line naming the model and sandbox."""
        assert snap_compare(running_app(tmp_path), terminal_size=SIZE, run_before=command_running)

    def test_finished(self, snap_compare: SnapCompare, tmp_path: Path) -> None:
        """You should see the whole run: thinking in italics, the approved `edit calc.py`,
        `gate passed` in green, `run success`, a green status line `■ success`, gate `● passed`."""

        async def approve_and_finish(pilot: Pilot[Any]) -> None:
            await modal(pilot)
            await pilot.press("y")
            await finished(pilot)

        assert snap_compare(fixing_app(tmp_path), terminal_size=SIZE, run_before=approve_and_finish)

    def test_narrow(self, snap_compare: SnapCompare, tmp_path: Path) -> None:
        """You should see, at 60x24, the meters and gate as a compact strip above the transcript,
        one line each, no side panel, and nothing cut off at the right edge."""
        assert snap_compare(
            running_app(tmp_path), terminal_size=(60, 24), run_before=command_running
        )


class TestApprovalModal:
    def test_modal_with_a_diff(self, snap_compare: SnapCompare, tmp_path: Path) -> None:
        """You should see the decision modal for `write calc.py`: why (default tier), asked by root
        at step 2, the coloured unified diff (- a - b / + a + b), `shown in full`, and all five
        answers y e a n d; the status line behind reads `⏸ waiting on you: write calc.py`."""

        async def at_modal(pilot: Pilot[Any]) -> None:
            await modal(pilot)
            steady(pilot)

        assert snap_compare(fixing_app(tmp_path), terminal_size=SIZE, run_before=at_modal)

    def test_split_diff_when_wide(self, snap_compare: SnapCompare, tmp_path: Path) -> None:
        """You should see, at 160 columns, the diff side by side: before (line 2 red) and after
        (line 2 green) with line numbers."""

        async def at_modal(pilot: Pilot[Any]) -> None:
            await modal(pilot)
            steady(pilot)

        assert snap_compare(fixing_app(tmp_path), terminal_size=(160, 36), run_before=at_modal)

    def test_remember_form(self, snap_compare: SnapCompare, tmp_path: Path) -> None:
        """You should see the remember form: the pattern field prefilled with `calc.py`, the scope
        choice (this run only / this project / this user / a policy file) and the preview
        `will keep: write allow calc.py — this run only`."""

        async def remember(pilot: Pilot[Any]) -> None:
            await modal(pilot)
            await pilot.press("a")
            steady(pilot)

        assert snap_compare(fixing_app(tmp_path), terminal_size=SIZE, run_before=remember)


class TestStartScreen:
    def test_no_model_configured(self, snap_compare: SnapCompare, tmp_path: Path) -> None:
        """You should see the start screen saying no model is configured and naming the three
        key/model variable pairs, empty tables (`nothing is waiting on you`, `no runs yet`) and
        the commands to start or resume a run."""
        app = make_app(tmp_path / "none.db")

        async def loaded(pilot: Pilot[Any]) -> None:
            await pilot.app.workers.wait_for_complete()
            await pilot.pause()

        assert snap_compare(app, terminal_size=SIZE, run_before=loaded)


FIXED_PROCESSES = [
    ProcessSample(4242, "python3", "/usr/bin/python3 -B slow_tests.py", 97.0, 48.5, 75.0),
    ProcessSample(4250, "sh", "/bin/sh -c sleep 60", 0.0, 1.2, 3.0),
]
"""What the process pane is fed in its picture: live pids, CPU and ages would differ per run."""


class TestWorkspacePanes:
    def test_changed_files_with_a_diff(self, snap_compare: SnapCompare, tmp_path: Path) -> None:
        """You should see, under the finished run, the drawer titled `workspace changes · 1 file`:
        the row `calc.py  +1 -1  M modified` highlighted on the left and, beside it, its coloured
        diff (--- a/calc.py, +++ b/calc.py, - return a - b, + return a + b)."""

        async def changes_open(pilot: Pilot[Any]) -> None:
            await modal(pilot)
            await pilot.press("y")
            await finished(pilot)
            await pilot.press("f")
            pane = pilot.app.screen.query_one(FileChanges)
            await until(pilot, lambda: pane.shown == "calc.py")
            await pilot.pause()

        assert snap_compare(fixing_app(tmp_path), terminal_size=SIZE, run_before=changes_open)

    def test_processes_of_a_running_command(
        self, snap_compare: SnapCompare, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """You should see, under the running `python3 -B slow_tests.py`, the drawer titled
        `processes · 2`: a table (pid, cpu, mem, age, command) with 4242 at 97% and 48.5M, age
        1:15, `python3 -B slow_tests.py` (the program by name, not path), and 4250 `sh -c sleep
        60`."""

        # Fixed from the first sample: a real one (its command lines hold this checkout's path)
        # would widen the command column for good, and the picture would depend on where it ran.
        monkeypatch.setattr(processes, "sample_processes", lambda *_, **__: list(FIXED_PROCESSES))

        async def processes_open(pilot: Pilot[Any]) -> None:
            await command_running(pilot)
            pane = pilot.app.screen.query_one(Processes)
            await pilot.press("p")
            await until(pilot, lambda: pane.samples == FIXED_PROCESSES)
            await pilot.pause()

        assert snap_compare(running_app(tmp_path), terminal_size=SIZE, run_before=processes_open)

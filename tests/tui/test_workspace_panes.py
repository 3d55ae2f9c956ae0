"""The workspace drawer: the files the run changed with their diffs, and the running processes."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import pytest
from rich.text import Text
from textual.app import App, ComposeResult
from textual.widgets import ContentSwitcher, DataTable

from ioh_tui.policy import Policy
from ioh_tui.tui.app import IohApp
from ioh_tui.tui.widgets.diff_view import DiffView
from ioh_tui.tui.widgets.file_changes import FileChanges, line_counts
from ioh_tui.tui.widgets.processes import Processes, memory
from tests.tui.harness import FIX_CALC, READ_CALC, USAGE, build, finished, run_screen, until

SLEEPER = ["python3", "-c", "import time; time.sleep(3)"]
"""A command that runs long enough to be sampled, and then ends by itself."""


def changes(app: IohApp) -> FileChanges:
    return run_screen(app).query_one(FileChanges)


def processes(app: IohApp) -> Processes:
    return run_screen(app).query_one(Processes)


def test_line_counts_leave_out_the_file_headers() -> None:
    diff = "--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n-old\n+new\n+more\n same\n"
    assert line_counts(diff) == (2, 1)
    assert (memory(14.25), memory(2048)) == ("14.2M", "2.0G")


async def test_a_run_that_edits_a_file_shows_it_with_its_diff(tmp_path: Path) -> None:
    app = build(
        tmp_path,
        {"tool_calls": [READ_CALC], "usage": USAGE},
        {"tool_calls": [FIX_CALC], "usage": USAGE},
        policy=Policy.permissive(),
    )
    async with app.run_test(size=(120, 36)) as pilot:
        pane = changes(app)
        await pilot.press("f")
        assert run_screen(app).has_class("-drawer")
        await until(pilot, lambda: "calc.py" in pane.changes and pane.shown == "calc.py")
        await finished(pilot)
        assert list(pane.changes) == ["calc.py"]
        assert pane.changes["calc.py"].kind == "modified"
        table = pane.query_one("#file-list", DataTable)
        row = [str(cell) for cell in table.get_row("calc.py")]
        assert row == ["calc.py", "+1 -1", "M modified"]
        diff = pane.query_one(DiffView)
        assert "-    return a - b" in diff.body and "+    return a + b" in diff.body
        assert pane.border_title == "workspace changes · 1 file"
        assert not pane.has_class("-empty")


async def test_a_file_put_back_as_it_was_leaves_the_list(tmp_path: Path) -> None:
    unfix = {
        "name": "edit_file",
        "arguments": {"path": "calc.py", "old_text": "a + b", "new_text": "a - b"},
    }
    app = build(
        tmp_path,
        {"tool_calls": [FIX_CALC], "usage": USAGE},
        # The model's pause lets the watcher report the edit before it is undone.
        {"tool_calls": [unfix], "usage": USAGE, "delay_ms": 1500},
        {"text": "Put it back.", "usage": USAGE},
        policy=Policy.permissive(),
        criterion=None,
    )
    async with app.run_test(size=(120, 36)) as pilot:
        pane = changes(app)
        await until(pilot, lambda: "calc.py" in pane.changes)
        # The diff leaves with the file (its removal completes after the list is updated).
        await until(pilot, lambda: not pane.changes and not pane.query(DiffView))
        assert pane.has_class("-empty") and pane.shown is None
        assert pane.border_title == "workspace changes · 0 files"


async def test_a_running_command_shows_in_the_process_pane_until_it_ends(tmp_path: Path) -> None:
    app = build(
        tmp_path,
        {"tool_calls": [{"name": "exec", "arguments": {"argv": SLEEPER}}], "usage": USAGE},
        {"text": "Slept.", "usage": USAGE},
        policy=Policy.default().layer("project").allow_exec("python3", "python3 *"),
        criterion=None,
    )
    async with app.run_test(size=(120, 36)) as pilot:
        pane = processes(app)
        await pilot.press("p")

        def sleeper_rows() -> list[list[str]]:
            table = pane.query_one("#process-table", DataTable)
            rows = [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]
            return [row for row in rows if "time.sleep(3)" in row[4]]

        await until(pilot, lambda: bool(sleeper_rows()))
        ((pid, cpu, mem, age, _),) = sleeper_rows()
        (sample,) = [s for s in pane.samples if str(s.pid) == pid]
        assert cpu.endswith("%") and mem.endswith("M") and sample.rss_mb > 1
        assert age.count(":") == 1 and pane.border_title != "processes · none"
        assert not pane.has_class("-empty")
        await until(pilot, lambda: not sleeper_rows())
        await finished(pilot)
        # Checked at the end, not before the command: the run starts at mount, and a loaded
        # machine can launch the command before the first key is pressed.
        await until(pilot, lambda: pane.has_class("-empty"))
        assert pane.border_title == "processes · none"
        assert "no command running" in str(pane.query_one(".processes--empty").render())


async def test_f_and_p_open_switch_and_close_the_drawer(tmp_path: Path) -> None:
    app = build(tmp_path, {"text": "Nothing to do.", "delay_ms": 60_000})
    async with app.run_test(size=(100, 30)) as pilot:
        screen = run_screen(app)
        drawer = screen.query_one("#drawer", ContentSwitcher)
        assert not screen.has_class("-drawer")
        await pilot.press("f")
        assert screen.has_class("-drawer") and drawer.current == "file-changes"
        await pilot.press("p")
        assert screen.has_class("-drawer") and drawer.current == "processes"
        assert screen.focused is screen.query_one("#process-table")
        await pilot.press("p")
        assert not screen.has_class("-drawer")
        assert screen.focused is screen.transcript
        assert app.running  # the keys never touch the run


@pytest.mark.parametrize(("size", "key"), [((80, 24), "f"), ((60, 24), "f"), ((60, 24), "p")])
async def test_the_open_drawer_fits_small_terminals(
    tmp_path: Path, size: tuple[int, int], key: str
) -> None:
    app = build(
        tmp_path,
        {"tool_calls": [FIX_CALC], "usage": USAGE},
        {"text": "Done.", "usage": USAGE},
        policy=Policy.permissive(),
    )
    async with app.run_test(size=size) as pilot:
        await pilot.press(key)
        pane = changes(app)
        if key == "f":
            await until(pilot, lambda: pane.shown == "calc.py")
        await finished(pilot)
        await pilot.pause()
        screen = run_screen(app)
        drawer = screen.query_one("#drawer")
        assert drawer.size.height >= 7
        assert screen.transcript.size.height >= 5
        for widget in screen.query("*"):
            if widget.display and widget.region.width:
                assert widget.region.right <= size[0], widget
                assert widget.region.bottom <= size[1], widget


def test_cells_read_without_colour() -> None:
    # +/- carry the meaning of the line counts; colour only repeats it.
    from ioh_tui.services import FileChange
    from ioh_tui.tui.widgets.file_changes import _counts

    cell = _counts(FileChange("x", "modified", "--- a/x\n+++ b/x\n-a\n+b\n"))
    assert isinstance(cell, Text) and cell.plain == "+1 -1"


class LonePane(App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.notices: list[tuple[str, str]] = []

    def compose(self) -> ComposeResult:
        yield FileChanges()

    def notify(self, message: str, *, severity: str = "information", **_: Any) -> None:
        self.notices.append((severity, message))


async def test_a_watch_that_cannot_start_is_a_notice_not_a_crash(tmp_path: Path) -> None:
    app = LonePane()
    async with app.run_test() as pilot:
        worker = app.query_one(FileChanges).watch_workspace(tmp_path / "absent")
        await until(pilot, lambda: worker.is_finished)
        await pilot.pause()
        assert app.is_running and app.return_code is None
        ((severity, message),) = app.notices
        assert severity == "warning" and message.startswith("Workspace changes stopped")


async def test_a_workspace_removed_when_the_run_ends_keeps_the_runs_changes(
    tmp_path: Path,
) -> None:
    # As the demo does: its workspace is removed as soon as the run ends. That removal is not
    # the run's change: the pane keeps what the run changed, not every file "deleted".
    root = tmp_path / "ws"
    root.mkdir()
    (root / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (root / "notes.md").write_text("notes\n")
    app = LonePane()
    async with app.run_test() as pilot:
        pane = app.query_one(FileChanges)
        run: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        worker = pane.watch_workspace(root, until=run)
        await pilot.pause(0.3)
        (root / "calc.py").write_text("def add(a, b):\n    return a + b\n")
        await until(pilot, lambda: "calc.py" in pane.changes)
        run.set_result(None)
        shutil.rmtree(root)
        await until(pilot, lambda: worker.is_finished)
        await pilot.pause(0.3)
        assert {path: c.kind for path, c in pane.changes.items()} == {"calc.py": "modified"}
        assert not app.notices

"""The run view: meters, the gate, stopping, help, the narrow layout, NO_COLOR."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from textual.message import Message

from ioh_tui.engine import NewRun, TaskContract
from ioh_tui.policy import Policy
from ioh_tui.sandbox import probe, select
from ioh_tui.store import Store
from ioh_tui.tui.app_run import AppRun
from ioh_tui.tui.factory import make_app
from ioh_tui.tui.screens.approval import ApprovalModal
from ioh_tui.tui.screens.confirm_stop import ConfirmStopModal
from ioh_tui.tui.screens.gate import GateModal
from ioh_tui.tui.screens.help import HelpScreen
from ioh_tui.tui.widgets.gate_status import GateStatus
from ioh_tui.tui.widgets.meter import Meter
from ioh_tui.tui.widgets.rung_warning import RungWarning
from tests.tui.harness import (
    FIX_CALC,
    READ_CALC,
    USAGE,
    build,
    calc_project,
    finished,
    fixed_clock,
    modal,
    run_screen,
    scripted,
    until,
)

SLOW = {"text": "Thinking hard.", "delay_ms": 60_000}
"""A turn whose model takes a minute to answer: the run is mid-step until stopped."""


async def test_the_meters_move_and_warn_near_their_limits(tmp_path: Path) -> None:
    app = build(
        tmp_path,
        {"tool_calls": [READ_CALC], "usage": USAGE},
        {"tool_calls": [FIX_CALC], "usage": USAGE},
        max_steps=4,
        token_budget=2000,
        policy=Policy.permissive(),
    )
    readings: list[tuple[str, str, bool]] = []
    async with app.run_test(size=(120, 36)) as pilot:
        screen = run_screen(app)
        steps, tokens = (
            screen.query_one("#meter-steps", Meter),
            screen.query_one("#meter-tokens", Meter),
        )
        await until(pilot, lambda: screen.totals.step >= 1 and screen.totals.tokens > 0)
        readings.append((steps.reading, tokens.reading, tokens.has_class("-danger")))
        await finished(pilot)
        readings.append((steps.reading, tokens.reading, tokens.has_class("-danger")))
        assert screen.query_one("#meter-time", Meter).reading == "0:00"
        assert screen.query_one("#meter-cost", Meter).reading == "unknown"
    assert readings == [("1 / 4", "960 / 2.0k", False), ("2 / 4", "1.9k / 2.0k", True)]


def test_a_meter_state_follows_its_share_of_the_budget() -> None:
    meter = Meter("steps")
    for value, state in ((5, ""), (9, "-warn"), (11, "-danger"), (12, "-danger")):
        meter.show(value, 12, f"{value} / 12")
        assert (meter.has_class("-warn"), meter.has_class("-danger")) == (
            state == "-warn",
            state == "-danger",
        )


async def test_the_gate_goes_from_not_run_to_failed_to_passed(tmp_path: Path) -> None:
    app = build(
        tmp_path,
        {"tool_calls": [READ_CALC], "usage": USAGE},
        {"tool_calls": [FIX_CALC], "usage": USAGE},
        policy=Policy.permissive(),
    )
    messages: list[Message] = []
    async with app.run_test(size=(120, 36), message_hook=messages.append) as pilot:
        gate = run_screen(app).gate
        await until(pilot, lambda: gate.state != "none")
        assert gate.command == "python3 -B check_calc.py"
        await finished(pilot)
        # Each change is seen where it is posted and again where it bubbles to: once each.
        changes = {id(m): m for m in messages if isinstance(m, GateStatus.Changed)}.values()
        states = [m.state for m in changes]
        assert states == ["none", "not run", "running", "failed", "running", "passed"]
        assert gate.has_class("-passed")
        await pilot.press("g")
        assert isinstance(app.screen, GateModal)
        assert "exited 0" in app.screen.detail
        await pilot.press("escape")
        assert type(app.screen) is not GateModal
        assert app.result is not None


async def test_the_gate_evidence_of_a_failure_is_one_key_away(tmp_path: Path) -> None:
    app = build(
        tmp_path, {"tool_calls": [READ_CALC], "usage": USAGE}, SLOW, policy=Policy.permissive()
    )
    async with app.run_test(size=(120, 36)) as pilot:
        gate = run_screen(app).gate
        await until(pilot, lambda: gate.state == "failed")
        await pilot.press("g")
        assert isinstance(app.screen, GateModal)
        assert "add is wrong" in app.screen.detail and "exited 1" in app.screen.detail
        await pilot.press("escape")
        assert type(app.screen) is not GateModal
        assert app.running  # escape closed the evidence; it did not stop the run


@pytest.mark.parametrize(
    "keys", [("escape", "y"), ("escape", "enter"), ("ctrl+c",)], ids=["esc y", "esc enter", "^c"]
)
async def test_esc_confirmed_and_ctrl_c_stop_the_run_with_outcome_cancelled(
    tmp_path: Path, keys: tuple[str, ...]
) -> None:
    app = build(tmp_path, SLOW)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: run_screen(app).totals.step == 1)
        await pilot.press(*keys)
        await finished(pilot)
        assert run_screen(app).status.status == "■ cancelled"
    assert app.result is not None and app.result.outcome == "cancelled" and app.exit_status == 1
    async with Store.open(tmp_path / "store.db") as store:
        assert (await store.run(app.result.run_id)).outcome == "cancelled"


@pytest.mark.parametrize("key", ["escape", "n"])
async def test_esc_asks_first_and_esc_or_n_keeps_the_run(tmp_path: Path, key: str) -> None:
    app = build(tmp_path, {"text": "Thinking a while.", "delay_ms": 2000})
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: run_screen(app).totals.step == 1)
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, ConfirmStopModal))
        await pilot.press(key)
        await until(pilot, lambda: app.screen is run_screen(app))
        assert app.running  # one stray escape (or two) never throws the run away
        await finished(pilot)
    assert app.result is not None and app.result.outcome != "cancelled"


async def test_stopping_while_a_decision_waits_closes_the_modal(tmp_path: Path) -> None:
    app = build(tmp_path, {"tool_calls": [FIX_CALC], "usage": USAGE})
    async with app.run_test(size=(100, 30)) as pilot:
        await modal(pilot)
        await pilot.press("ctrl+c")  # escape there opens the deny reason; ctrl+c stops
        await finished(pilot)
        assert not isinstance(app.screen, ApprovalModal)
        assert not run_screen(app).status.waiting
    assert app.result is not None and app.result.outcome == "cancelled"


@pytest.mark.parametrize("key", ["f1", "question_mark"])
async def test_help_lists_every_key(tmp_path: Path, key: str) -> None:
    app = build(tmp_path, SLOW)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press(key)
        assert isinstance(app.screen, HelpScreen)
        text = " ".join(" ".join(row) for row in app.screen.rows)
        for key_name in (
            "ctrl+c",
            "esc",
            "f1 / ?",
            "ctrl+p",
            "g",
            "enter / space",
            "y",
            "e",
            "a",
            "n",
            "d",
            "ctrl+s",
        ):
            assert key_name in text, key_name
        await pilot.press("escape")
        assert (type(app.screen) is HelpScreen, app.running) == (False, True)


async def test_a_narrow_terminal_drops_the_side_panel_into_a_strip_without_overflow(
    tmp_path: Path,
) -> None:
    app = build(
        tmp_path, {"tool_calls": [READ_CALC], "usage": USAGE}, SLOW, policy=Policy.permissive()
    )
    async with app.run_test(size=(60, 24)) as pilot:
        screen = run_screen(app)
        await until(pilot, lambda: screen.gate.state == "failed")
        await pilot.pause()
        assert screen.has_class("-narrow")
        assert not screen.query_one("#run-facts").display
        for widget in screen.query("*"):
            if widget.display and widget.region.width:
                assert widget.region.right <= 60, widget
        assert screen.query_one("#meter-steps", Meter).size.height == 1


async def test_no_color_renders_without_colour(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    app = build(
        tmp_path, {"tool_calls": [READ_CALC], "usage": USAGE}, SLOW, policy=Policy.permissive()
    )
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: run_screen(app).gate.state == "failed")
        svg = app.export_screenshot()
    assert app.no_color
    # The exporter draws the window chrome (traffic lights) and a default foreground of its own;
    # everything the app paints must be grey.
    chrome = {"#ff5f57", "#febc2e", "#28c840", "#c5c8c6"}
    colours = set(re.findall(r"#[0-9a-f]{6}", svg)) - chrome
    assert colours and all(c[1:3] == c[3:5] == c[5:7] for c in colours), colours


async def test_the_none_sandbox_is_shown_loudly(tmp_path: Path) -> None:
    project = calc_project(tmp_path / "project")
    run = AppRun(
        NewRun(TaskContract.workspace("look", project)),
        scripted({"text": "Nothing to do."}),
        sandbox=select("none"),
    )
    app = make_app(tmp_path / "store.db", run, clock=fixed_clock)
    async with app.run_test(size=(120, 30)) as pilot:
        await finished(pilot)
        screen = run_screen(app)
        assert screen.has_class("-unsandboxed")
        assert screen.status.facts[0] == "UNSANDBOXED"
        assert "unconfined" in str(screen.query_one("#run-facts").render())


@pytest.mark.skipif(os.geteuid() != 0, reason="a root harness's warning")
async def test_a_contained_rung_that_keeps_uid_0_is_warned_across_the_top(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if "bwrap" not in probe():
        pytest.skip("bwrap is not available here")
    monkeypatch.setenv("IOH_TUI_SANDBOX_ROOT_USER", "root")
    project = calc_project(tmp_path / "project")
    run = AppRun(
        NewRun(TaskContract.workspace("look", project)),
        scripted({"text": "Nothing to do."}),
        sandbox=select("bwrap"),
    )
    app = make_app(tmp_path / "store.db", run, clock=fixed_clock)
    async with app.run_test(size=(120, 30)) as pilot:
        await finished(pilot)
        warning = run_screen(app).query_one(RungWarning)
        text = " ".join(str(warning.render()).split())
        assert warning.display and warning.region.height > 0
    assert text.startswith("WARNING: the harness runs as root and IOH_TUI_SANDBOX_ROOT_USER=root")
    assert "uid 0" in text


@pytest.mark.parametrize("rung", ["floor", "none", "bwrap"])
async def test_a_rung_that_contains_nothing_is_warned_across_the_top(
    tmp_path: Path, rung: str
) -> None:
    # The same meaning as the WARNING `ioh-tui exec` prints for the floor and none.
    if rung not in probe():
        pytest.skip(f"{rung} is not available here")
    project = calc_project(tmp_path / "project")
    run = AppRun(
        NewRun(TaskContract.workspace("look", project)),
        scripted({"text": "Nothing to do."}),
        sandbox=select(rung),
    )
    app = make_app(tmp_path / "store.db", run, clock=fixed_clock)
    async with app.run_test(size=(120, 30)) as pilot:
        await finished(pilot)
        warning = run_screen(app).query_one(RungWarning)
        text = " ".join(str(warning.render()).split())
        shown = warning.display and warning.region.height > 0 and warning.region.y == 0
    if rung == "bwrap":
        assert not shown and text == ""
        return
    assert shown, "the warning is the first line of the run view"
    backend = "portable-floor" if rung == "floor" else "none"
    assert text.startswith(f"WARNING: sandbox {backend} contains nothing: commands")
    for reach in ("the store", "its key", "your files", "the network"):
        assert reach in text, reach

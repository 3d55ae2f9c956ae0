"""Desktop notifications through the terminal: opt-in, and nothing in them can drive it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ioh_tui.core.errors import ConfigError
from ioh_tui.tui.notify import BELL, NOTIFY_ENV, Style, notify_style, sequence
from tests.integration.cli.test_exec import ioh
from tests.tui.harness import FIX_CALC, USAGE, Terminal, build, finished, modal, until


def test_the_variable_names_one_of_two_sequences_or_nothing() -> None:
    assert notify_style("") is None and notify_style("  ") is None
    assert notify_style("osc9") == "osc9" and notify_style(" OSC777 ") == "osc777"
    with pytest.raises(ConfigError, match="IOH_TUI_NOTIFY='yes': use osc9 or osc777"):
        notify_style("yes")


def test_a_target_cannot_end_the_sequence_or_start_another() -> None:
    hostile = "rm -rf x\x07\x1b]2;owned\x1b\\; and more"
    nine = sequence("osc9", "ioh-tui: waiting on you", hostile)
    seven = sequence("osc777", "ioh-tui; waiting", hostile)
    for seq, start in ((nine, "\x1b]9;"), (seven, "\x1b]777;notify;")):
        inner = seq.removeprefix(start).removesuffix("\x07")
        assert seq.startswith(start) and seq.endswith("\x07")
        assert "\x1b" not in inner and "\x07" not in inner
    assert nine == "\x1b]9;ioh-tui: waiting on you: rm -rf x\\x07\\x1b]2;owned\\x1b\\; and more\x07"
    assert seven.count(";") == 3  # notify;title;body: the texts' own are commas now
    assert sequence("osc9", "t", "x" * 500).count("x") < 130  # cut to a glance


async def test_a_waiting_decision_is_notified_only_when_asked_for(tmp_path: Path) -> None:
    said = sequence("osc777", "ioh-tui: waiting on you", "write calc.py")
    cases: list[tuple[Style | None, list[str]]] = [(None, []), ("osc777", [said])]
    for notify, expected in cases:
        terminal = Terminal()
        app = build(
            tmp_path / str(notify),
            {"tool_calls": [FIX_CALC], "usage": USAGE},
            terminal=terminal,
            notify=notify,
        )
        async with app.run_test(size=(100, 30)) as pilot:
            await modal(pilot)
            await until(pilot, lambda t=terminal: BELL in t.written)  # type: ignore[misc]
            notified = [s for s in terminal.written if s.startswith(("\x1b]9;", "\x1b]777;"))]
            assert notified == expected
            await pilot.press("y")
            await finished(pilot)


def test_a_bad_value_is_one_line_and_exit_2_before_anything_starts(tmp_path: Path) -> None:
    env = {**os.environ, NOTIFY_ENV: "loud", "IOH_TUI_HOME": str(tmp_path)}
    done = ioh("demo", env=env)
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "ioh-tui: IOH_TUI_NOTIFY='loud': use osc9 or osc777 (or leave it unset)"
    )

"""Issue 18, item 8: the app draws the model's control characters escaped, never raw.

A scripted model writes an OSC 52 clipboard write, a title change, CSI and a C1 CSI into its
text, a command's argv (the command prints them back) and a file path. Every line the run view
and the trace view render holds none of the raw characters, and the escaped form is on screen.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.geometry import Region
from textual.screen import Screen
from textual.widget import Widget

from ioh_tui.policy import Policy
from ioh_tui.tui.history import History
from ioh_tui.tui.screens.trace import TraceScreen
from tests.integration.cli.test_control_chars import RAW, TURNS
from tests.tui.harness import build, finished, until


def rendered(screen: Screen[Any]) -> str:
    """Every line every displayed widget of `screen` renders, as text."""
    lines: list[str] = []
    for widget in screen.walk_children(Widget, with_self=True):
        width, height = widget.size
        if not widget.display or not width or not height:
            continue
        for strip in widget.render_lines(Region(0, 0, width, height)):
            lines.append(strip.text)
    return "\n".join(lines)


async def test_the_run_and_trace_views_draw_control_characters_escaped(tmp_path: Path) -> None:
    app = build(tmp_path, *TURNS, policy=Policy.permissive(), criterion=None)
    async with app.run_test(size=(160, 60)) as pilot:
        await finished(pilot)
        run_view = rendered(app.screen)
        assert not [c for c in RAW if c in run_view]
        assert "\\x1b]52;c;cm0gLXJmIH4=\\x07" in run_view  # the model's text, escaped

        app.push_screen(TraceScreen(History(tmp_path / "store.db"), 1))
        await until(
            pilot, lambda: isinstance(app.screen, TraceScreen) and app.screen.trace is not None
        )
        await pilot.pause()
        trace_view = rendered(app.screen)
        assert not [c for c in RAW if c in trace_view]
        assert "\\x1b]0;pwned\\x07" in trace_view  # the write's path, escaped

"""The key bar: the keys that work here, redrawn only when they change, pressed by a click."""

from __future__ import annotations

from typing import ClassVar

from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.widget import Widget

from ioh_tui.tui.widgets.key_bar import KeyBar


class Zed(Widget, can_focus=True):
    BINDINGS: ClassVar[list[BindingType]] = [Binding("z", "nothing", "Zed")]

    def action_nothing(self) -> None:
        pass


class Keys(App[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("x", "count", "Count"),
        Binding("h", "count", "Hidden", show=False),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.counted = 0

    def compose(self) -> ComposeResult:
        yield Zed()
        yield KeyBar()

    def action_count(self) -> None:
        self.counted += 1


async def test_shows_the_shown_keys_and_a_click_presses_one() -> None:
    app = Keys()
    async with app.run_test(size=(80, 5)) as pilot:
        bar = app.query_one(KeyBar)
        await pilot.pause()
        shown = [k.description for k in bar.keys]
        assert "Count" in shown and "Hidden" not in shown
        assert shown[-1] == "palette"  # the command palette's key sits at the right end
        start = next(s for s, _, k in bar._spans if k.description == "Count")
        await pilot.click(KeyBar, offset=(start + 1, 0))
        assert app.counted == 1


async def test_redraws_only_when_the_keys_change() -> None:
    app = Keys()
    async with app.run_test(size=(80, 5)) as pilot:
        app.set_focus(None)
        await pilot.pause()
        bar = app.query_one(KeyBar)
        before = bar.keys
        app.screen.refresh_bindings()  # nothing changed: the same keys, the same tuple
        await pilot.pause()
        assert bar.keys is before
        app.query_one(Zed).focus()  # a widget that brings its own key
        await pilot.pause()
        assert "Zed" in [k.description for k in bar.keys]

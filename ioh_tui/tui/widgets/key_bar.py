"""KeyBar: the keys that work here, on one line at the bottom (Textual's `Footer`, made cheap).

Textual's `Footer` recomposes (a dozen widgets unmounted, mounted and styled) every time any
binding may have changed, which is every focus change, whether or not the keys did. While a
100-agent tree runs that was a fifth of the app's time (benchmarks/bench_tui_tree.py). This bar is
one widget: it redraws only when the keys it shows change, and never asks for a layout pass.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import events
from textual.screen import Screen
from textual.widget import Widget


@dataclass(frozen=True, slots=True)
class Key:
    """One key shown: what to press, what it does, whether it works now."""

    key: str
    """The binding's key, as `App.simulate_key` takes it."""
    shown: str
    """The key as displayed (`^q`, `enter`)."""
    description: str
    enabled: bool


class KeyBar(Widget):
    """The screen's shown bindings (one per action), the command palette key on the right.

    A click on a key presses it.
    """

    DEFAULT_CSS = """
    KeyBar {
        dock: bottom;
        height: 1;
        background: $footer-background;
        color: $footer-description-foreground;
    }
    """

    ALLOW_SELECT = False

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.keys: tuple[Key, ...] = ()
        """The keys shown, left to right (the palette's last)."""
        self._spans: list[tuple[int, int, Key]] = []
        """Each key's columns on the last render, for clicks."""

    def on_mount(self) -> None:
        """Follow the screen's bindings."""
        self.screen.bindings_updated_signal.subscribe(self, self._bindings_changed)
        self.call_after_refresh(self._bindings_changed, self.screen)

    def on_unmount(self) -> None:
        """Stop following them."""
        self.screen.bindings_updated_signal.unsubscribe(self)

    def _bindings_changed(self, screen: Screen[object]) -> None:
        if not self.is_attached or screen is not self.screen:
            return
        keys = self._current(screen)
        if keys != self.keys:
            self.keys = keys
            self.refresh()  # same size: a repaint, never a layout pass

    def _current(self, screen: Screen[object]) -> tuple[Key, ...]:
        app = self.app
        seen: set[str] = set()
        keys: list[Key] = []
        palette: Key | None = None
        for key, (_, binding, enabled, _tooltip) in screen.active_bindings.items():
            shown = Key(key, app.get_key_display(binding), binding.description, enabled)
            if key == app.COMMAND_PALETTE_BINDING and app.ENABLE_COMMAND_PALETTE:
                palette = shown
            elif binding.show and binding.action not in seen:
                seen.add(binding.action)
                keys.append(shown)
        return (*keys, palette) if palette is not None else tuple(keys)

    def render(self) -> Text:
        """Each key bold, its description after it; disabled ones dim; the palette at the end."""
        key_style = self.app.theme_variables.get("footer-key-foreground", "")
        text = Text(no_wrap=True, overflow="crop")
        self._spans = []
        for shown in self.keys:
            if shown.key == self.app.COMMAND_PALETTE_BINDING and len(text) < self.size.width:
                text.append(" " * max(1, self.size.width - len(text) - _width(shown)))
            start = len(text)
            text.append(f" {shown.shown} ", style=f"bold {key_style}".strip())
            text.append(f"{shown.description} " if shown.description else "")
            if not shown.enabled:
                text.stylize("dim", start)
            self._spans.append((start, len(text), shown))
        return text

    def on_click(self, event: events.Click) -> None:
        """Press the key under the pointer (a disabled one rings the bell)."""
        for start, end, shown in self._spans:
            if start <= event.x < end:
                event.stop()
                if shown.enabled:
                    self.app.simulate_key(shown.key)
                else:
                    self.app.bell()
                return


def _width(shown: Key) -> int:
    return len(shown.shown) + 2 + (len(shown.description) + 1 if shown.description else 0)

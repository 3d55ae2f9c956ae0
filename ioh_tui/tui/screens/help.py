"""HelpScreen: every key of the app, read from the bindings themselves so it cannot drift."""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar

from rich.table import Table
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from ioh_tui.tui.styles import stylesheet

Section = tuple[str, Iterable[BindingType]]


def _keys(binding: BindingType) -> tuple[str, str]:
    if isinstance(binding, Binding):
        keys = " / ".join(_pretty(k) for k in binding.key.split(","))
        return keys, binding.tooltip or binding.description or binding.action
    key, action, *rest = binding
    return _pretty(key), rest[0] if rest else action


def _pretty(key: str) -> str:
    return {"question_mark": "?", "escape": "esc", "space": "space"}.get(key.strip(), key.strip())


class HelpScreen(ModalScreen[None]):
    """A table of keys per place (everywhere, run view, tool calls, decision modal)."""

    CSS_PATH = stylesheet("help")
    AUTO_FOCUS = "#help-keys"

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q,f1,question_mark", "close", "Close")]
    """Any of these closes the help."""

    def __init__(self, sections: list[Section]) -> None:
        super().__init__()
        self.sections = sections
        """(title, bindings) pairs to list."""
        self.rows: list[tuple[str, str, str]] = []
        """(section, keys, what they do), as listed."""

    def compose(self) -> ComposeResult:
        """One table per section."""
        with Vertical(id="help-box"):
            yield Static("Keys", id="help-title")
            with VerticalScroll(id="help-keys"):
                for title, bindings in self.sections:
                    table = Table(
                        title=title, title_justify="left", box=None, expand=True, show_header=False
                    )
                    table.add_column("key", style="bold", no_wrap=True, width=18)
                    table.add_column("does", ratio=1)
                    seen: set[str] = set()
                    for binding in bindings:
                        keys, does = _keys(binding)
                        if keys not in seen:
                            seen.add(keys)
                            table.add_row(keys, does)
                            self.rows.append((title, keys, does))
                    yield Static(table, classes="help-section")
            yield Static("esc closes · ctrl+p opens the command palette", id="help-foot")

    def action_close(self) -> None:
        """Back to where you were."""
        self.dismiss(None)

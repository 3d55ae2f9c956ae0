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

from ioh_tui.tui.screens.approval import ApprovalModal
from ioh_tui.tui.screens.budget import BudgetModal
from ioh_tui.tui.screens.queue import DecisionQueueScreen
from ioh_tui.tui.screens.rules import RulesScreen
from ioh_tui.tui.screens.run import RunScreen
from ioh_tui.tui.screens.runs import RunBrowserScreen
from ioh_tui.tui.screens.start import StartScreen
from ioh_tui.tui.screens.summary import SummaryModal
from ioh_tui.tui.screens.trace import TraceScreen
from ioh_tui.tui.screens.trust import TrustModal
from ioh_tui.tui.styles import stylesheet
from ioh_tui.tui.widgets.compaction import Compaction
from ioh_tui.tui.widgets.tool_call import ToolCall

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


def help_sections(everywhere: Iterable[BindingType]) -> list[Section]:
    """Keys per place, straight from the bindings (`everywhere`: the app's own)."""
    palette = [Binding("ctrl+p", "command_palette", "Command palette: search every command")]
    focus = [
        Binding("tab,shift+tab", "focus", "Move between the transcript, tool calls and fields")
    ]
    return [
        ("Everywhere", [*everywhere, *palette, *focus]),
        ("Run view", RunScreen.BINDINGS),
        ("Tool call (focused)", ToolCall.BINDINGS),
        ("Compaction (focused)", Compaction.BINDINGS),
        ("Compaction summary", SummaryModal.BINDINGS),
        ("Decision", ApprovalModal.BINDINGS),
        ("Decision queue", DecisionQueueScreen.BINDINGS),
        ("Budget nearly spent", BudgetModal.BINDINGS),
        ("Start screen", StartScreen.BINDINGS),
        ("Run browser", RunBrowserScreen.BINDINGS),
        ("Trace view", TraceScreen.BINDINGS),
        ("Rules", RulesScreen.BINDINGS),
        ("Project trust", TrustModal.BINDINGS),
    ]

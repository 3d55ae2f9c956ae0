"""RulesScreen: every rule a run in the workspace starts with, its layer and file; revoke one.

The same list as `ioh-tui rules` (`config/remembered.py`): the built-in tiers, the configuration
files' policies, the remembered rules, and (opened from a run) the rules remembered while it
goes. A rule of a user's or project's file (`policy.toml` or `config.toml`) is revoked with x and
written back to its file at once; later runs no longer have it (a run going now keeps the policy
it started with). The others say why they cannot be revoked here.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import DataTable, Static

from ioh_tui.config.remembered import (
    RuleInForce,
    revoke,
    rules_in_force,
    this_run,
    why_not_revocable,
)
from ioh_tui.config.trust import section_title
from ioh_tui.core.errors import ConfigError
from ioh_tui.policy.types import Rule
from ioh_tui.tui.describe import visible
from ioh_tui.tui.styles import stylesheet
from ioh_tui.tui.widgets.key_bar import KeyBar

COLUMNS = ("id", "layer", "rule", "file")


class RulesScreen(Screen[None]):
    """The rules in force for one workspace, and revoking a remembered one."""

    CSS_PATH = stylesheet("rules")
    AUTO_FOCUS = "#rules-table"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "app.pop_screen", "Back"),
        Binding("x", "revoke", "Revoke", tooltip="Remove the selected rule from its file"),
        Binding("ctrl+r", "refresh", "Refresh", show=False, tooltip="Read the files again"),
    ]
    """Keys of the rules screen."""

    def __init__(self, workspace: Path, remembered: Sequence[Rule] = ()) -> None:
        super().__init__()
        self.workspace = workspace
        """The project whose rules are shown."""
        self.remembered = tuple(remembered)
        """Rules remembered by the run going now (shown as the layer `this run`)."""
        self.rules: list[RuleInForce] = []
        """The rules shown, in table order."""

    def compose(self) -> ComposeResult:
        """Title, the table, what was left out, the keys."""
        yield Static(f"Rules in force in {self.workspace}", id="rules-title", markup=False)
        yield Static(
            "deny beats ask beats allow, whatever the layer · x removes a rule from its file "
            "(later runs; a run going now keeps its own)",
            id="rules-help",
            markup=False,
        )
        yield DataTable(id="rules-table", cursor_type="row", zebra_stripes=True)
        yield Static("", id="rules-left-out", markup=False)
        yield KeyBar()

    def on_mount(self) -> None:
        """Set up the table and read the files."""
        self.query_one(DataTable).add_columns(*COLUMNS)
        self.action_refresh()

    def action_refresh(self) -> None:
        """Read the files again."""
        table = self.query_one(DataTable)
        table.clear()
        try:
            self.rules, config = rules_in_force(self.workspace)
            self.rules += this_run(self.remembered)
        except ConfigError as exc:
            self.rules = []
            self.notify(f"Cannot read the rules: {exc}", severity="error", timeout=10)
            return
        for found in self.rules:
            where = found.file or "built in"
            shown = visible(found.rule.describe())[0]
            table.add_row(found.id, found.layer, shown, visible(where)[0], key=found.id)
        left = [f"{section_title(kind)} of {file}" for kind, file in config.left_out]
        self.query_one("#rules-left-out", Static).update(
            "left out (not agreed to): " + "; ".join(left) if left else ""
        )

    def action_revoke(self) -> None:
        """X: remove the selected rule from its file, if it is a user's or project's file."""
        table = self.query_one(DataTable)
        if not self.rules or table.cursor_row >= len(self.rules):
            return
        found = self.rules[table.cursor_row]
        if not found.revocable:
            self.notify(f"Rule {found.id} {why_not_revocable(found)}.", severity="warning")
            return
        try:
            revoke(found, self.workspace)
        except ConfigError as exc:
            self.notify(str(exc), severity="error", timeout=10)
            return
        self.notify(f"Revoked {found.id}: {found.rule.describe()} (removed from {found.file}).")
        self.action_refresh()

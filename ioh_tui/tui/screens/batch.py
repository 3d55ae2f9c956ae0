"""BatchModal: one answer for several similar requests — a rule to remember, or a reason to deny."""

from __future__ import annotations

from typing import ClassVar, Literal

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Input, Label, Static

from ioh_tui.core.acts import Effect
from ioh_tui.policy import ApprovalRequest, Decision, Rule
from ioh_tui.policy.glob import glob_match
from ioh_tui.policy.suggest import suggest_pattern
from ioh_tui.tui.describe import one_line
from ioh_tui.tui.styles import stylesheet

BatchMode = Literal["remember", "deny"]


class BatchModal(ModalScreen[tuple[Decision, list[int]]]):
    """Returns one decision and the request ids it answers (a narrowed rule answers fewer)."""

    CSS_PATH = stylesheet("batch")
    AUTO_FOCUS = "#batch-input"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Back", tooltip="Back to the queue, nothing answered"),
    ]
    """Enter in the field confirms; escape goes back."""

    def __init__(self, requests: list[ApprovalRequest], mode: BatchMode) -> None:
        super().__init__()
        self.requests = requests
        """The marked requests (one act, for a rule)."""
        self.mode: BatchMode = mode
        """Remember a rule (approving what it covers), or deny all with one reason."""

    def compose(self) -> ComposeResult:
        """The requests, the field, and what the answer will do."""
        n = len(self.requests)
        with Vertical(id="batch-box"):
            if self.mode == "remember":
                act = self.requests[0].act.value
                yield Static(f"Approve {n} similar requests and remember a rule", id="batch-title")
                yield Label(f"Rule pattern for {act} (glob; * matches anything) — enter approves")
                pattern = suggest_pattern([r.target for r in self.requests])
                yield Input(pattern, id="batch-input")
            else:
                yield Static(f"Deny {n} requests", id="batch-title")
                yield Label("Why not? Every asking agent reads this — enter denies")
                yield Input(placeholder="reason (optional)", id="batch-input")
            yield Static("", id="batch-effect", markup=False)
            with VerticalScroll(id="batch-list"):
                for r in self.requests:
                    yield Static(
                        f"{r.agent_label}: {r.act.value} {one_line(r.target, 90)}",
                        classes="batch-item",
                        markup=False,
                    )

    def on_mount(self) -> None:
        """Say what the prefilled answer would do."""
        self._effect()

    def covered(self) -> list[ApprovalRequest]:
        """The requests the typed rule covers (all of them for a deny)."""
        if self.mode == "deny":
            return self.requests
        pattern = self.query_one("#batch-input", Input).value.strip()
        return [r for r in self.requests if pattern and glob_match(pattern, r.target)]

    @on(Input.Changed, "#batch-input")
    def _effect(self) -> None:
        if self.mode == "deny":
            text = f"denies all {len(self.requests)}"
        else:
            covered = len(self.covered())
            pattern = self.query_one("#batch-input", Input).value.strip() or "?"
            rule = f"{self.requests[0].act.value} allow {pattern}"
            text = f"approves {covered} of {len(self.requests)}; keeps `{rule}` for this run"
            if covered < len(self.requests):
                text += " (the others stay waiting)"
        self.query_one("#batch-effect", Static).update(text)

    @on(Input.Submitted, "#batch-input")
    def _submitted(self, event: Input.Submitted) -> None:
        value = event.value.strip()
        if self.mode == "deny":
            decision = Decision.deny(value or "denied by the operator")
            self.dismiss((decision, [r.request_id for r in self.requests]))
            return
        covered = self.covered()
        if not covered:
            self.notify("The rule covers none of these requests.", severity="warning")
            return
        rule = Rule(self.requests[0].act, Effect.ALLOW, value)
        self.dismiss((Decision.remembering(rule, scope="run"), [r.request_id for r in covered]))

    def action_cancel(self) -> None:
        """Escape: back to the queue without answering."""
        self.dismiss(None)

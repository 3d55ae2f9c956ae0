"""BudgetModal: a budget is nearly spent — raise it, stop the run now, or let it finish."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, Static

from ioh_tui.tui.styles import stylesheet
from ioh_tui.tui.totals import Budget

UNITS = {
    "max_steps": "steps",
    "time_budget_s": "seconds",
    "token_budget": "tokens",
    "max_total_tokens": "tokens, the whole tree",
}
"""The unit a new limit is typed in, per budget."""

CHOICES = "r raise the limit… · s stop the run now · f let it finish"
"""The three answers, written on the modal."""


@dataclass(frozen=True, slots=True)
class BudgetAnswer:
    """What the person chose."""

    choice: Literal["raise", "stop", "finish"]
    limit: float | None = None
    """The new limit (for `raise`), in the budget's unit."""


class BudgetModal(ModalScreen[BudgetAnswer]):
    """Offers what to do about one nearly spent budget."""

    CSS_PATH = stylesheet("budget")
    AUTO_FOCUS = ""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("r", "raise", "Raise", tooltip="Type a new, higher limit"),
        Binding("s", "stop", "Stop run", tooltip="Stop the run now (outcome cancelled)"),
        Binding(
            "f", "finish", "Let it finish", tooltip="Keep going; the run ends when it is spent"
        ),
        Binding("escape", "back", "Back / let it finish", show=False),
        Binding("f1,question_mark", "app.help", "Help", show=False),
    ]
    """r, s and f answer; in the limit field enter confirms and escape goes back."""

    def __init__(self, budget: Budget, *, stopped: int | None = None) -> None:
        super().__init__()
        self.budget = budget
        """The budget nearly spent (or spent)."""
        self.stopped = stopped
        """The id of a run this budget already stopped: the only answer is to raise and resume."""

    def compose(self) -> ComposeResult:
        """What is nearly spent, the answers, and the (hidden) new-limit field."""
        unit = UNITS[self.budget.name]
        with Vertical(id="budget-box"):
            if self.stopped is None:
                title, choices = f"Budget nearly spent: {self.budget.describe()}", CHOICES
            else:
                title = f"Run {self.stopped} stopped at its budget: {self.budget.describe()}"
                choices = "r raise the limit and resume the run · esc back"
            yield Static(title, id="budget-title", markup=False)
            yield Static(choices, id="budget-choices", markup=False)
            with Vertical(id="budget-form"):
                yield Label(f"New limit ({unit}), higher than {self.floor:g}: enter")
                yield Input(f"{self.suggested():g}", id="budget-limit", type="number")

    @property
    def floor(self) -> float:
        """What a new limit must pass: the limit, or what was spent past it.

        A tree's agents still working when its ceiling is reached spend a little more.
        """
        return max(self.budget.limit, self.budget.used)

    def suggested(self) -> float:
        """Double the floor: enough to matter, little enough to stay a budget."""
        doubled = self.floor * 2
        return float(int(doubled)) if self.budget.name != "time_budget_s" else doubled

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The letter keys answer only while the field is closed (they are text inside it)."""
        if action in ("stop", "finish") and self.stopped is not None:
            return False  # the run has already ended
        if action in ("raise", "stop", "finish"):
            return not self._form_open
        return True

    @property
    def _form_open(self) -> bool:
        return self.has_class("-raising")

    def action_raise(self) -> None:
        """r: open the new-limit field."""
        self.add_class("-raising")
        # An r pressed as the offer opens comes before its field is composed (querying it then
        # crashed the app): the field takes focus once it is there.
        self._focus_limit()

    def on_mount(self) -> None:
        """Focus the field if r came before it was composed."""
        if self._form_open:
            self.call_after_refresh(self._focus_limit)

    def _focus_limit(self) -> None:
        for field in self.query("#budget-limit").results(Input):
            field.focus()

    def action_stop(self) -> None:
        """s: stop the run now."""
        self.dismiss(BudgetAnswer("stop"))

    def action_finish(self) -> None:
        """Key f: let the run go on; it ends when the budget is spent."""
        self.dismiss(BudgetAnswer("finish"))

    def action_back(self) -> None:
        """Esc: from the field back to the answers; on the answers, let it finish."""
        if self._form_open:
            self.remove_class("-raising")
            self.set_focus(None)
        else:
            self.action_finish()

    @on(Input.Submitted, "#budget-limit")
    def _submitted(self, event: Input.Submitted) -> None:
        try:
            limit = float(event.value)
        except ValueError:
            limit = 0.0
        if limit <= self.floor:
            self.notify(f"A new limit must be higher than {self.floor:g}.", severity="warning")
            return
        self.dismiss(BudgetAnswer("raise", limit))

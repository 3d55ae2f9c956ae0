"""The status line: what the run is doing (waiting on you outranks everything), then the facts.

Facts (model, provider, sandbox, ...) are dropped from the right when the line is too narrow.
"""

from __future__ import annotations

from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget


class StatusLine(Widget):
    """One line: the status on the left, the run's facts on the right as room allows."""

    activity: reactive[str] = reactive("starting")
    """What the engine is doing now."""
    waiting: reactive[str] = reactive("")
    """What is waiting on the person (non-empty outranks every other status)."""
    stopping: reactive[bool] = reactive(False)
    """A stop was asked for and the engine has not finished yet."""
    outcome: reactive[str] = reactive("")
    """How the run ended, once it has."""
    facts: reactive[tuple[str, ...]] = reactive(())
    """Model, provider, sandbox...: most important first, dropped from the end when narrow."""
    cluster: reactive[str] = reactive("")
    """The Ray cluster the tree runs on (`--ray`), shown after the first fact; empty: none."""

    @property
    def status(self) -> str:
        """The status text shown, by priority: waiting on you > stopping > outcome > activity."""
        if self.waiting:
            return f"⏸ waiting on you: {self.waiting}"
        if self.stopping and not self.outcome:
            return "■ stopping…"
        if self.outcome:
            return f"■ {self.outcome}"
        return f"▶ {self.activity}"

    def watch_waiting(self) -> None:
        """The class lets the stylesheet make waiting loud."""
        self._restate()

    def watch_outcome(self) -> None:
        """The class colours the outcome."""
        self._restate()

    def _restate(self) -> None:
        ended = bool(self.outcome) and not self.waiting
        good = self.outcome in ("success", "finished")
        paused = self.outcome == "awaiting_approval"
        self.set_class(bool(self.waiting), "-waiting")
        self.set_class(ended and good, "-done")
        self.set_class(ended and paused, "-paused")
        self.set_class(ended and not good and not paused, "-bad")

    def render(self) -> Text:
        """The status, then as many facts as fit."""
        width = self.size.width
        status = self.status
        if len(status) > width:
            return Text(status[: max(0, width - 1)] + "…", style="bold")
        line = Text(status, style="bold")
        shown: list[str] = []
        facts = [*self.facts[:1], self.cluster, *self.facts[1:]] if self.cluster else self.facts
        for fact in facts:
            candidate = " · ".join([*shown, fact])
            if len(status) + 3 + len(candidate) > width:
                break
            shown.append(fact)
        if shown:
            right = " · ".join(shown)
            line.append(" " * (width - len(status) - len(right)))
            line.append(right, style="dim")
        return line

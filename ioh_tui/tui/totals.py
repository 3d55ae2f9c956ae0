"""What the meters show: the root's steps, time, tokens and cost; each agent's context window.

Textual-free so the arithmetic is tested on its own; the run screen copies it into `Meter`s.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ioh_tui.core import events as ev
from ioh_tui.engine.budgets import OFFER_FROM
from ioh_tui.tui.describe import duration, money, tokens

Clock = Callable[[], float]
"""Seconds from an arbitrary origin (`time.monotonic` in the app, a fixed value in snapshots)."""


NEARLY_SPENT = OFFER_FROM
"""From this share of a budget on, the app offers to raise it, stop, or let the run finish."""


@dataclass(frozen=True, slots=True)
class Budget:
    """One budget and how much of it is used."""

    name: str
    """`max_steps`, `time_budget_s`, `token_budget` or `max_total_tokens` (the tree's ceiling):
    the names `BudgetRaises` takes."""
    used: float
    limit: float

    def describe(self) -> str:
        """`8 of 10 steps`, `4:10 of 5:00`, `41.0k of 50.0k tokens`, `… tokens, the whole tree`."""
        if self.name == "max_steps":
            return f"{int(self.used)} of {int(self.limit)} steps"
        if self.name == "time_budget_s":
            return f"{duration(self.used)} of {duration(self.limit)}"
        spent = f"{tokens(int(self.used))} of {tokens(int(self.limit))} tokens"
        return f"{spent}, the whole tree" if self.name == "max_total_tokens" else spent


@dataclass(slots=True)
class Totals:
    """Running totals of one run, as the root agent reports them."""

    max_steps: int | None = None
    time_budget_s: float | None = None
    token_budget: int | None = None
    step: int = 0
    committed_tokens: int = 0
    """Tokens of committed steps (the engine's count, across resumes)."""
    step_tokens: int = 0
    """Tokens reported for the step in flight (replaced when the step commits)."""
    cost_usd: float = 0.0
    cost_known: bool = False
    """Whether any call reported a cost."""
    started_at: float | None = None
    finished_at: float | None = None
    tree_tokens: int = 0
    """Tokens the whole tree has spent (`TreeStatus`; 0 outside a tree)."""
    tree_ceiling: int | None = None
    """The tree's token ceiling, if it has one."""

    @property
    def tokens(self) -> int:
        """Committed tokens plus the step in flight."""
        return self.committed_tokens + self.step_tokens

    def elapsed(self, clock: Clock) -> float:
        """Seconds since the run first started (as its time budget counts); frozen once it ended."""
        if self.started_at is None:
            return 0.0
        end = self.finished_at if self.finished_at is not None else clock()
        return max(0.0, end - self.started_at)

    def apply(self, event: ev.Event, clock: Clock) -> bool:
        """Fold in a root event; returns whether anything shown changed."""
        if isinstance(event, ev.RunStarted):
            self._budgets(event.budgets)
            # A resumed run's earlier drives count: its meters start where they left off (its
            # time from the run's first start, as its time budget counts it).
            self.started_at = clock() - event.elapsed_s
            self.finished_at = None
            self.committed_tokens = event.tokens
            if event.cost_usd is not None:
                self.cost_usd, self.cost_known = event.cost_usd, True
        elif isinstance(event, ev.StepStarted):
            self.step = event.step
            self.step_tokens = 0
        elif isinstance(event, ev.UsageReported):
            self.step_tokens += event.input_tokens + event.output_tokens
            if event.cost_usd is not None:
                self.cost_usd += event.cost_usd
                self.cost_known = True
        elif isinstance(event, ev.StepFinished):
            self.step = event.step
            self.committed_tokens = event.total_tokens
            self.step_tokens = 0
        elif isinstance(event, ev.BudgetsChanged):
            self._budgets(event.budgets)
        elif isinstance(event, ev.TreeStatus):
            # Kept for `nearly_spent`; the meters do not show it (the tree pane does).
            self.tree_tokens, self.tree_ceiling = event.tokens, event.token_ceiling
            return False
        elif isinstance(event, ev.RunFinished):
            self.step = event.steps
            self.committed_tokens = event.tokens
            self.step_tokens = 0
            self.finished_at = clock()
        else:
            return False
        return True

    def _budgets(self, budgets: dict[str, Any]) -> None:
        self.max_steps = budgets.get("max_steps")
        self.time_budget_s = budgets.get("time_budget_s")
        self.token_budget = budgets.get("token_budget")

    def nearly_spent(self, clock: Clock) -> list[Budget]:
        """The budgets at or past `NEARLY_SPENT` of their limit, with what is used and the limit."""
        found: list[Budget] = []
        if self.finished_at is not None or self.started_at is None:
            return found
        for name, used, limit in (
            ("max_steps", self.step, self.max_steps),
            ("time_budget_s", self.elapsed(clock), self.time_budget_s),
            ("token_budget", self.tokens, self.token_budget),
            ("max_total_tokens", self.tree_tokens, self.tree_ceiling),
        ):
            if limit and used >= NEARLY_SPENT * limit:
                found.append(Budget(name, used, limit))
        return found

    def steps_reading(self) -> str:
        """`3 / 12`."""
        return f"{self.step} / {self.max_steps}" if self.max_steps else f"{self.step}"

    def time_reading(self, clock: Clock) -> str:
        """`0:42 / 5:00`, or just the elapsed time when there is no budget."""
        spent = duration(self.elapsed(clock))
        return f"{spent} / {duration(self.time_budget_s)}" if self.time_budget_s else spent

    def tokens_reading(self) -> str:
        """`1.2k / 50.0k`, or just the count."""
        used = tokens(self.tokens)
        return f"{used} / {tokens(self.token_budget)}" if self.token_budget else used

    def cost_reading(self) -> str:
        """`$0.0123`, or `unknown` when no call reported a cost."""
        return money(self.cost_usd) if self.cost_known else "unknown"


@dataclass(slots=True)
class ContextUse:
    """How full one agent's context window is: its latest prompt against the window.

    The prompt is what the provider reported for the agent's last call (`UsageReported`), or
    after a compaction what the engine counted for the fitted request (`ContextCompacted`), which
    the next call's report then replaces.
    """

    window: int | None = None
    """The window the engine fits the agent's requests to (`RunStarted.context_window`)."""
    used: int | None = None
    """Tokens of the latest prompt; None before the first call (or when none reported any)."""

    def apply(self, event: ev.Event) -> bool:
        """Fold in one of the agent's events; returns whether the reading changed."""
        if isinstance(event, ev.RunStarted):
            self.window = event.context_window
            self.used = None
        elif isinstance(event, ev.UsageReported) and event.input_tokens > 0:
            self.used = event.input_tokens
        elif isinstance(event, ev.ContextCompacted):
            self.used = event.tokens_after
        else:
            return False
        return True

    def reading(self) -> str:
        """`11.4k / 16.0k`; `– / 16.0k` before the first call; `–` when the window is unknown."""
        used = tokens(self.used) if self.used is not None else "–"
        return f"{used} / {tokens(self.window)}" if self.window else used

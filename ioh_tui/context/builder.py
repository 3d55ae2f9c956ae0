"""The context of one drive: what was sent last turn, fitted again with what came since.

`fit` says when the oldest turns must be folded; the engine then asks the model for a summary
(`compaction.summary_request`) and calls `fold` with it, or with None to leave the turns out.
`restore` rebuilds a resumed drive's context from the stored summary, so nothing is asked twice.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ioh_tui.context import compaction
from ioh_tui.context.fit import Fitted, fit, turn_starts
from ioh_tui.context.tokens import Gauge
from ioh_tui.core.transcript import Message, ToolSpec

ANSWER_SHARE = 4
"""Room kept for the answer: a quarter of the window, at most the request's `max_tokens`."""
_LEFT_OUT_TOKENS = 60
"""What the left-out line may take in the window."""


@dataclass(slots=True)
class Context:
    """Builds each turn's history within `window` tokens (answer room included)."""

    window: int
    max_answer: int = 8192
    gauge: Gauge = field(default_factory=Gauge)
    summary: str | None = None
    """The latest summary of the oldest turns (None: nothing summarised)."""
    summarised: int = 0
    """Turns of the run's history the summary stands for."""
    left_out: int = 0
    """Turns after those left out without a summary."""
    _sent: list[Message] = field(default_factory=list)
    _taken: int = 0
    """How much of the run's history `_sent` has taken in."""
    _last: int = 0
    """The count of the last request fitted."""

    @property
    def limit(self) -> int:
        """The most a request's prompt may count."""
        return self.window - min(self.max_answer, self.window // ANSWER_SHARE)

    @property
    def folded(self) -> int:
        """Turns of the run's history no longer sent as they were."""
        return self.summarised + self.left_out

    def fit(
        self, pinned: Sequence[Message], history: Sequence[Message], tools: Sequence[ToolSpec]
    ) -> Fitted:
        """This turn's history after `pinned` (`history` only ever grows in a drive)."""
        self._sent.extend(history[self._taken :])
        self._taken = len(history)
        fitted = fit(
            pinned,
            self._sent,
            limit=self.limit,
            count=lambda messages: self.gauge.count(messages, tools),
            lead=compaction.lead(self.summary, self.summarised, self.left_out),
            lead_reserve=compaction.SUMMARY_TOKENS + _LEFT_OUT_TOKENS,
        )
        self._sent = list(fitted.kept)
        self._last = fitted.tokens
        return fitted

    def to_fold(self, turns: int) -> list[Message]:
        """The messages of the oldest `turns` turns still sent."""
        return self._sent[: turn_starts(self._sent)[turns]]

    def fold(self, turns: int, summary: str | None) -> None:
        """Fold the oldest `turns` turns: into `summary`, or left out when it is None."""
        self._sent = self._sent[turn_starts(self._sent)[turns] :]
        if summary is None:
            self.left_out += turns
            return
        # The new summary was asked with the previous one, so it stands for all folded turns.
        self.summary = summary
        self.summarised += self.left_out + turns
        self.left_out = 0

    def restore(self, history: Sequence[Message], summary: str, summarised: int) -> None:
        """Start a resumed drive from a stored summary of the first `summarised` turns."""
        starts = turn_starts(history)
        self._sent = list(history[starts[summarised] :]) if summarised < len(starts) else []
        self._taken = len(history)
        self.summary, self.summarised, self.left_out = summary, summarised, 0

    def shrink(self) -> None:
        """The provider refused the last request as too long: fit the rest of the drive to less.

        The window in force was evidently larger than the model's (or the count ran low), so the
        limit drops to three quarters of what was refused, for every later turn of the drive.
        """
        target = max(1, self._last * 3 // 4)
        self.window = max(1, min(self.window - 1, target + min(self.max_answer, target // 3)))

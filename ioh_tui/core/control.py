"""The control-flow exceptions: how a drive is ended or redirected, in one place.

These are not failures of ioh-tui (those are `errors.IohError`); they carry a run to its outcome.
`Stop` ends a drive with an outcome, `RunCancelled` is a tripped cancel token, and
`BudgetExhausted` is a provider retry that the time budget cuts short (the loop turns it into
`time_budget_exceeded`, so it is a `ProviderError` only for callers outside a run).
"""

from __future__ import annotations

from ioh_tui.core.errors import ProviderError
from ioh_tui.core.outcomes import Outcome


class Stop(Exception):
    """Ends the drive with an outcome."""

    def __init__(
        self, outcome: Outcome, steps: int, detail: str = "", request_id: int | None = None
    ) -> None:
        super().__init__(outcome)
        self.outcome = outcome
        self.steps = steps
        """The last committed step."""
        self.detail = detail
        self.request_id = request_id
        """The deferred request a paused run waits on."""


class RunCancelled(Exception):
    """The run was cancelled; it ends `cancelled` with every committed step kept."""


class BudgetExhausted(ProviderError):
    """A retry was due but waiting for it would outlast the run's time budget."""

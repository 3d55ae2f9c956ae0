"""How a run ends: the outcome vocabulary every layer shares (events, results, the store)."""

from __future__ import annotations

from typing import Literal, get_args

Outcome = Literal[
    "success",
    "finished",
    "step_cap_reached",
    "time_budget_exceeded",
    "cost_budget_exceeded",
    "awaiting_approval",
    "stalled",
    "cancelled",
    "failed",
]

OUTCOMES: tuple[Outcome, ...] = get_args(Outcome)
"""Every outcome, in the documented order."""

RunStatus = Literal["running", "paused", "completed"]
"""A stored run's status: `paused` waits on a deferred decision; `completed` has an outcome."""

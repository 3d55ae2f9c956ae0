"""How a run ends: the outcome vocabulary every layer shares (events, results, the store)."""

from __future__ import annotations

from collections.abc import Container
from typing import Literal, Protocol, get_args

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

CRASHED = "crashed"
"""The state of a run left `running` by a driver that died."""


class _StoredRun(Protocol):
    @property
    def id(self) -> int: ...
    @property
    def status(self) -> str: ...
    @property
    def outcome(self) -> str | None: ...
    @property
    def root_run_id(self) -> int | None: ...


def run_state(run: _StoredRun, driven: Container[int]) -> str:
    """One word for where a stored run stands: its outcome, `running`, or `crashed`.

    The app's lists and the `runs` and `show` commands all say it, so a run whose process died
    is never shown as running.

    Args:
        run: The run (a `RunRow`).
        driven: Runs a live driver holds now (`Store.driven_runs`).

    Returns:
        The outcome of an ended or paused run; `running` while a live driver holds it (a
        sub-agent's is its tree's root's: only the root takes a lease); `crashed` when it was
        left running by a driver that is gone.
    """
    if run.status == "running":
        held = run.id in driven or (run.root_run_id is not None and run.root_run_id in driven)
        return "running" if held else CRASHED
    return run.outcome or run.status

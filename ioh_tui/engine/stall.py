"""Stall detection: a run that repeats itself is told once, then stopped (`stalled`).

After each committed step the loop hands `Progress` the step's signature (every tool call with its
arguments; empty when it called none) and whether the workspace changed. `window` (the contract's
`stall_after`) consecutive identical signatures, or `window` steps in a row that changed nothing
and repeated an earlier signature, escalate: the first escalation asks the agent to change its
approach (`Verdict.REPLAN`), the next one ends the run (`Verdict.STALLED`). A step with no tool
call while a criterion still fails has the empty signature, so it counts like any repeat.

As in the original harness the state is in memory only: a resumed run starts counting afresh.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum


class Verdict(Enum):
    """What the loop does after a step."""

    FINE = "fine"
    REPLAN = "replan"
    STALLED = "stalled"


@dataclass(slots=True)
class Progress:
    """Counts repeats and unproductive steps over a window."""

    window: int
    """Steps that make a stall; 0 turns detection off."""
    max_replans: int = 1
    """Warnings before the run is stopped."""
    replans: int = 0
    _seen: list[str] = field(default_factory=list)
    _unproductive: int = 0
    _last: str | None = None
    _in_a_row: int = 0

    def step(self, signature: str, *, changed: bool) -> Verdict:
        """Take one committed step; say whether the run goes on, is warned, or has stalled."""
        if self.window <= 0:
            return Verdict.FINE
        if signature == self._last:
            self._in_a_row += 1
        else:
            self._last, self._in_a_row = signature, 1
        if self._in_a_row >= self.window:
            return self._escalate()
        if changed:
            self._seen.clear()
            self._unproductive = 0
            return Verdict.FINE
        repeated = signature in self._seen
        self._seen.append(signature)
        self._unproductive += 1
        if self._unproductive < self.window or not repeated:
            return Verdict.FINE
        return self._escalate()

    def _escalate(self) -> Verdict:
        self._seen.clear()
        self._unproductive = 0
        self._last, self._in_a_row = None, 0
        if self.replans < self.max_replans:
            self.replans += 1
            return Verdict.REPLAN
        return Verdict.STALLED


def replan_message(step: int, window: int, tried: str) -> str:
    """What the agent is told at the first escalation (it reads it with the step's results)."""
    return (
        f"[step {step}] You have made the same call {window} times, or gone {window} steps "
        f"without changing anything. Already tried: {tried or '(no tool call)'}. Change your "
        "approach: write a change, or gather something you have not seen yet. Repeating it again "
        "ends the run as stalled."
    )

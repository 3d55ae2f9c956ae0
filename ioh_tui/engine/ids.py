"""How a run is named in its events."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Who:
    """The root's run id, and in a tree the agent's own run id and its parent's."""

    run_id: int
    agent_id: int | None = None
    parent_id: int | None = None

"""How a run is named in its events."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypedDict


class WhoFields(TypedDict):
    """The naming fields every event takes."""

    run_id: int
    agent_id: int | None
    parent_id: int | None


@dataclass(frozen=True, slots=True)
class Who:
    """The root's run id, and in a tree the agent's own run id and its parent's."""

    run_id: int
    agent_id: int | None = None
    parent_id: int | None = None

    def fields(self) -> WhoFields:
        """As keyword arguments for an event."""
        return {"run_id": self.run_id, "agent_id": self.agent_id, "parent_id": self.parent_id}

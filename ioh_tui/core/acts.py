"""The five acts a policy governs, the three effects a rule can have, and how an ask is answered."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Literal


class Act(StrEnum):
    """What an action does to the world."""

    READ = "read"
    WRITE = "write"
    EXEC = "exec"
    NET = "net"
    MCP = "mcp"
    """A call to an MCP server's tool; the target is `SERVER/TOOL`."""


class Effect(StrEnum):
    """What a policy says about an act; ordered allow < ask < deny ("stricter" is larger)."""

    ALLOW = "allow"
    ASK = "ask"
    DENY = "deny"

    @property
    def rank(self) -> int:
        """Strictness: 0 for allow, 1 for ask, 2 for deny."""
        return _RANK[self]

    def stricter(self, other: Effect) -> Effect:
        """The stricter of two effects."""
        return self if self.rank >= other.rank else other


_RANK = {Effect.ALLOW: 0, Effect.ASK: 1, Effect.DENY: 2}


DecisionKind = Literal["approve", "deny", "defer"]
"""What a person (or an approver) answers to an ask."""

ApprovalStatus = Literal["pending", "approve", "deny", "abandoned", "expired"]
"""An `approvals` row's status: a deferred ask stays `pending`; a dead driver's, `abandoned`."""


@dataclass(frozen=True, slots=True)
class Answer:
    """The answer columns of an `approvals` row: what a decision writes, and is read back from."""

    status: Literal["approve", "deny"]
    reason: str | None = None
    """Only for a denial: what the model reads."""
    performed_target: str | None = None
    """Only for a rewrite: the target as performed."""
    performed_content: str | None = None
    """Only for a rewrite: the content as performed."""
    remembered: tuple[str, ...] = ()
    """Rules kept by a remember answer, as `act effect pattern`."""

"""The four acts a policy governs and the three effects a rule can have."""

from __future__ import annotations

from enum import StrEnum


class Act(StrEnum):
    """What an action does to the world."""

    READ = "read"
    WRITE = "write"
    EXEC = "exec"
    NET = "net"


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

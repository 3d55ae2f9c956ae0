"""Policy data: rules, layers, verdicts. Evaluation lives in `rules.py`."""

from __future__ import annotations

from dataclasses import dataclass

from ioh_tui.core.acts import Act, Effect


@dataclass(frozen=True, slots=True)
class Rule:
    """`effect` for `act` on targets matching the glob `pattern`."""

    act: Act
    effect: Effect
    pattern: str

    def describe(self) -> str:
        """`act effect pattern`, the form shown to people and in events."""
        return f"{self.act.value} {self.effect.value} {self.pattern}"


@dataclass(frozen=True, slots=True)
class Layer:
    """A named, ordered list of rules."""

    name: str
    rules: tuple[Rule, ...] = ()


@dataclass(frozen=True, slots=True)
class Verdict:
    """What the policy says about one act on one target, and which rule of which layer said it.

    `rule` and `layer` are None when the act's default decided.
    """

    effect: Effect
    rule: str | None = None
    layer: str | None = None

"""Policy data: rules, layers, verdicts. Evaluation lives in `rules.py`."""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace

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

    @classmethod
    def parse(cls, text: str) -> Rule:
        """The inverse of `describe` (the pattern may hold spaces)."""
        act, effect, pattern = text.split(" ", 2)
        return cls(Act(act), Effect(effect), pattern)


@functools.lru_cache(maxsize=4096)
def normalise_path_pattern(pattern: str) -> str:
    """A path pattern in the form targets take, so that it can match at all.

    Targets are normalised relative paths (`src/a.py`: no `./`, no leading or doubled `/`, no
    trailing `/`), so `./infra/*`, `/infra/*` and `infra//*` would never match anything and a
    deny written that way would be silently inert. They also match as `infra/*`, and a directory
    written with a trailing slash (`infra/`) as everything under it (`infra/*`). The rule keeps
    the pattern as written.
    """
    text = pattern
    directory = text.endswith("/")
    parts = [part for part in text.split("/") if part not in ("", ".")]
    text = "/".join(parts)
    if directory:
        text = f"{text}/*" if text else "*"
    return text or pattern


@dataclass(frozen=True, slots=True)
class Layer:
    """A named, ordered list of rules."""

    name: str
    rules: tuple[Rule, ...] = ()
    source: str | None = None
    """The file the layer was read from (a configuration or policy file); None: built in code."""


@dataclass(frozen=True, slots=True)
class Verdict:
    """What the policy says about one act on one target, and which rule of which layer said it.

    `rule` and `layer` are None when the act's default decided.
    """

    effect: Effect
    rule: str | None = None
    layer: str | None = None
    source: str | None = None
    """The file the deciding rule's layer was read from (None: built in, or a default)."""

    def origin(self) -> str:
        """Where the verdict came from, in words: `rule 'x' in layer 'y' of FILE` or the default."""
        if not self.rule:
            return "the default for this act"
        where = f"rule {self.rule!r} in layer {self.layer!r}"
        return f"{where} of {self.source}" if self.source else where


@dataclass(frozen=True, slots=True)
class Defaults:
    """The effect of each act when no rule matches.

    The field defaults are the `Policy.default()` tiers, which is also what a serialized policy
    gets for a key it leaves out: in particular a missing `net` means deny, so a policy written
    before egress was governed never gains network access by being read again.
    """

    read: Effect = Effect.ALLOW
    write: Effect = Effect.ASK
    exec: Effect = Effect.ASK
    net: Effect = Effect.DENY
    mcp: Effect = Effect.ASK
    """A policy written before MCP calls were governed asks about them when read again."""

    @classmethod
    def every(cls, effect: Effect) -> Defaults:
        """The same effect for every act."""
        return cls(read=effect, write=effect, exec=effect, net=effect, mcp=effect)

    def of(self, act: Act) -> Effect:
        """The default effect of `act`."""
        effect: Effect = getattr(self, act.value)
        return effect

    def with_effect(self, act: Act, effect: Effect) -> Defaults:
        """A copy with `act` defaulting to `effect`."""
        return replace(self, **{act.value: effect})

    def stricter(self, other: Defaults) -> Defaults:
        """Per act, the stricter of the two defaults."""
        return Defaults(
            read=self.read.stricter(other.read),
            write=self.write.stricter(other.write),
            exec=self.exec.stricter(other.exec),
            net=self.net.stricter(other.net),
            mcp=self.mcp.stricter(other.mcp),
        )

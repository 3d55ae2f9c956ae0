"""Removing one rule from a hand-written TOML file, keeping its comments and layout.

A configuration file (`config.toml`) is the user's own text: rewriting it from its parsed form
would drop every comment. A rule is an inline table (`{ act = …, effect = …, pattern = … }`), so
it is removed as text: each inline table in the file is a candidate, and a candidate is taken
only when the file parsed again has exactly that one rule fewer in that layer and nothing else
changed. A rule written some other way (a multi-line table, a pattern holding braces) is not
guessed at: the caller says to edit the file by hand.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterator

from ioh_tui.core.errors import ConfigError
from ioh_tui.policy.toml import parse_data
from ioh_tui.policy.types import Layer, Rule

_INLINE_TABLE = re.compile(r"\{[^{}\n]*\}")


def policy_layers(text: str) -> tuple[Layer, ...]:
    """The layers of a TOML text's `[policy]` table.

    Raises:
        ConfigError: the text is not valid TOML or its policy is malformed.
    """
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"not valid TOML: {exc}") from None
    return parse_data(data.get("policy", {}), "policy")[0]


def without_rule(text: str, layer: str, rule: Rule) -> str | None:
    """`text` with every copy of `rule` removed from the policy layer named `layer`.

    Returns None when a copy cannot be removed as one inline table (nothing is changed then).
    """
    while True:
        before = policy_layers(text)
        if rule not in _rules_of(before, layer):
            return text
        edited = next(
            (c for c in _candidates(text) if _one_fewer(before, _parsed(c), layer, rule)), None
        )
        if edited is None:
            return None
        text = edited


def _rules_of(layers: tuple[Layer, ...], name: str) -> tuple[Rule, ...]:
    return next((found.rules for found in layers if found.name == name), ())


def _parsed(text: str) -> tuple[Layer, ...] | None:
    try:
        return policy_layers(text)
    except ConfigError:
        return None


def _one_fewer(
    before: tuple[Layer, ...], after: tuple[Layer, ...] | None, name: str, rule: Rule
) -> bool:
    """Whether `after` is `before` with one copy of `rule` gone from layer `name`, and no more."""
    if after is None or len(after) != len(before):
        return False
    for old, new in zip(before, after, strict=True):
        if old.name != new.name:
            return False
        if old.name != name:
            if old.rules != new.rules:
                return False
            continue
        rules = old.rules
        if not any(
            rules[i] == rule and rules[:i] + rules[i + 1 :] == new.rules for i in range(len(rules))
        ):
            return False
    return True


def _candidates(text: str) -> Iterator[str]:
    """`text` with one inline table cut out (with its comma), each way it can be."""
    for match in _INLINE_TABLE.finditer(text):
        start, end = match.span()
        # Take the comma after the table, else the one before it, so the array stays valid.
        after = re.match(r"\s*,", text[end:])
        if after:
            end += after.end()
        else:
            before = re.search(r",\s*$", text[:start])
            if before:
                start = before.start()
        line_start = text.rfind("\n", 0, start) + 1
        line_end = text.find("\n", end)
        line_end = len(text) if line_end < 0 else line_end + 1
        rest = text[line_start:start] + text[end:line_end]
        if not rest.strip():
            # The table was alone on its line: the whole line goes.
            yield text[:line_start] + text[line_end:]
        else:
            yield text[:start] + text[end:]

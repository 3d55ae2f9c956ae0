"""Policies read from files, stacked as layers that name their file.

The configuration files' `[policy]` tables (user, then project) and the remembered rules
(`.ioh-tui/policy.toml`, project and user) sit under the contract's policy and `--policy`. Every
layer read from a file is renamed `SCOPE:NAME` and carries the file's path, so a verdict names the
file its rule came from. Evaluation stays deny-first across all of them (`Policy.explain`).

Defaults: a file's `[policy.defaults]` replace the default tiers for the acts it names. The
project's may not loosen an act the user's file names (the user's choice stands); a file of
remembered rules has rules only (its defaults, if written, are ignored).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ioh_tui.core.acts import Act, Effect
from ioh_tui.policy.rules import Policy
from ioh_tui.policy.types import Defaults, Layer, Rule

PATH_ACTS = (Act.READ, Act.WRITE)
"""Acts whose targets are workspace-relative paths."""


@dataclass(frozen=True, slots=True)
class FilePolicy:
    """One file's policy table: where it is, what scope it has, and whether it holds only rules."""

    scope: str
    """`user` or `project`."""
    path: Path
    table: Mapping[str, Any]
    """The `[policy]` table as parsed (the policy TOML's `layers` and `defaults`)."""
    rules_only: bool = False
    """A file of remembered rules: its defaults are not read."""


def widens(policy: Policy, tiers: Defaults | None = None) -> bool:
    """Whether `policy` could let an agent do more than the default tiers do.

    Any rule that is not a deny (an allow, or an ask that may lift a default deny), or any default
    looser than its tier. A policy of denies alone only narrows.
    """
    tiers = tiers or Defaults()
    if any(rule.effect is not Effect.DENY for layer in policy.layers for rule in layer.rules):
        return True
    return any(policy.defaults.of(act).rank < tiers.of(act).rank for act in Act)


def table_widens(table: Mapping[str, Any], *, rules_only: bool = False) -> bool:
    """`widens` for a `[policy]` table as parsed (its defaults ignored when `rules_only`)."""
    parsed = Policy.from_dict(dict(table), "policy")
    if rules_only:
        parsed = Policy(parsed.layers, Defaults())
    return widens(parsed)


def file_layers(file: FilePolicy, workspace: Path | None) -> tuple[Layer, ...]:
    """The file's layers, named `SCOPE:NAME`, carrying the file's path.

    A read or write pattern written as an absolute path under `workspace` is made relative to it
    (targets are workspace-relative); user-scope remembered rules are saved that way.
    """
    parsed = Policy.from_dict(dict(file.table), "policy")
    return tuple(
        replace(
            layer,
            name=f"{file.scope}:{layer.name}",
            source=str(file.path),
            rules=tuple(_relative(rule, workspace) for rule in layer.rules),
        )
        for layer in parsed.layers
    )


def stack_files(base: Policy, files: Iterable[FilePolicy], workspace: Path | None = None) -> Policy:
    """`base` (the default tiers) with each file's layers and defaults stacked on, in order."""
    layers = list(base.layers)
    defaults = base.defaults
    users: set[Act] = set()
    for file in files:
        layers += file_layers(file, workspace)
        if file.rules_only:
            continue
        named = [act for act in Act if act.value in file.table.get("defaults", {})]
        given = Policy.from_dict(dict(file.table), "policy").defaults
        defaults = overlay_defaults(
            defaults, given, named, set() if file.scope == "user" else users
        )
        if file.scope == "user":
            users.update(named)
    return Policy(tuple(layers), defaults)


def named_by_user(files: Iterable[FilePolicy]) -> set[Act]:
    """The acts whose default a user's configuration file names (a later layer may not loosen)."""
    return {
        act
        for file in files
        if file.scope == "user" and not file.rules_only
        for act in Act
        if act.value in file.table.get("defaults", {})
    }


def overlay_defaults(
    below: Defaults, given: Defaults, named: Iterable[Act], kept: set[Act]
) -> Defaults:
    """`below` with the acts in `named` taken from `given` (stricter-wins for those in `kept`)."""
    defaults = below
    for act in named:
        effect = given.of(act)
        if act in kept:
            effect = below.of(act).stricter(effect)
        defaults = defaults.with_effect(act, effect)
    return defaults


def absolute_pattern(rule: Rule, workspace: Path) -> Rule:
    """A path rule's pattern made absolute under `workspace` (a user-scope rule holds everywhere).

    Patterns of other acts (commands, hosts) are kept as they are.
    """
    if rule.act not in PATH_ACTS or rule.pattern.startswith("/"):
        return rule
    base = os.path.realpath(workspace)
    pattern = rule.pattern[2:] if rule.pattern.startswith("./") else rule.pattern
    return replace(rule, pattern=f"{base.rstrip('/')}/{pattern}")


def _relative(rule: Rule, workspace: Path | None) -> Rule:
    if workspace is None or rule.act not in PATH_ACTS or not rule.pattern.startswith("/"):
        return rule
    for base in {os.path.realpath(workspace), os.path.abspath(workspace)}:
        prefix = base.rstrip("/") + "/"
        if rule.pattern.startswith(prefix):
            return replace(rule, pattern=rule.pattern[len(prefix) :])
    return rule

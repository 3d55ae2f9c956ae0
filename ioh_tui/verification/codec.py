"""Criteria by their stored `kind`: one table, as `core.events.EVENT_TYPES` is for events."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from ioh_tui.core.errors import ConfigError
from ioh_tui.sandbox.base import Limits
from ioh_tui.verification.base import Criterion
from ioh_tui.verification.criteria import (
    Command,
    FileContains,
    FileEquals,
    NoGate,
    WorkspaceFileContains,
)
from ioh_tui.verification.documents import DocumentContains
from ioh_tui.verification.rust import (
    CompilesRust,
    EachCompilesRust,
    RustTestPasses,
    WorkspaceTestPasses,
)

_ALL: tuple[type[Criterion], ...] = (
    FileContains,
    FileEquals,
    WorkspaceFileContains,
    Command,
    NoGate,
    DocumentContains,
    CompilesRust,
    RustTestPasses,
    EachCompilesRust,
    WorkspaceTestPasses,
)
CRITERION_TYPES: dict[str, type[Criterion]] = {cls.kind: cls for cls in _ALL}
"""Every criterion class by its `kind`."""


def criterion_from_dict(data: Mapping[str, Any]) -> Criterion:
    """Rebuild a criterion from its JSON form.

    Raises:
        ConfigError: the kind is unknown.
        KeyError: a field the kind needs is missing.
    """
    kind = data.get("kind")
    cls = CRITERION_TYPES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise ConfigError(f"unknown verification kind {kind!r}")
    return cls.from_dict(data)


_LIST_FIELDS = frozenset({"argv", "files"})
"""Stored fields that are lists of strings; every other stored field is a string (or an int)."""
_INT_FIELDS = frozenset({"expect_exit"})
_OPTIONAL = {"expect_exit": 0}
"""Stored fields a TOML table may leave out, with the value they then take."""


def criterion_from_toml(data: Mapping[str, Any], where: str) -> Criterion:
    """A criterion from a contract's `[verification]` table: `kind` and that kind's fields.

    Every kind in `CRITERION_TYPES` can be written; its fields are the ones it stores (`argv`,
    `expect_exit`, `needle`, `text`, `file`, `files`, `test_src`). Without `kind`, a table with
    `argv` is a `command` and an empty one is `none`.

    Raises:
        ConfigError: one line naming `where` and the unknown kind, key, or the bad value.
    """
    kind = data.get("kind", "command" if "argv" in data else "none")
    cls = CRITERION_TYPES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise ConfigError(
            f"{where}: unknown kind {kind!r} (choose from {', '.join(sorted(CRITERION_TYPES))})"
        )
    fields: tuple[str, ...] = getattr(cls, "stored", ())
    allowed = {"kind", *fields}
    for key in data:
        if key not in allowed:
            raise ConfigError(
                f"{where}: unknown key {key!r} for kind {kind!r} "
                f"(allowed: {', '.join(sorted(allowed))})"
            )
    values: dict[str, Any] = {"kind": kind}
    for name in fields:
        if name not in data:
            if name in _OPTIONAL:
                values[name] = _OPTIONAL[name]
                continue
            raise ConfigError(f"{where}: kind {kind!r} needs {name!r}")
        values[name] = _field(data[name], name, f"{where}: {name}")
    return cls.from_dict(values)


def _field(value: Any, name: str, where: str) -> Any:
    if name in _LIST_FIELDS:
        if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"{where} must be a non-empty list of strings")
        return value
    if name in _INT_FIELDS:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{where} must be an integer")
        return value
    if not isinstance(value, str):
        raise ConfigError(f"{where} must be a string")
    return value


GATE_KEYS = ("timeout_s", "cpu_s", "memory_mb")
"""The gate's caps as the contract and the configuration name them (wall clock, CPU, memory)."""


def gate_limits(criterion: Criterion) -> Limits | None:
    """The caps on the programs `criterion` runs (None: it runs none)."""
    limits = getattr(criterion, "limits", None)
    return limits if isinstance(limits, Limits) else None


def gate_limits_dict(limits: Limits) -> dict[str, float | int | None]:
    """`limits` by the names in `GATE_KEYS`."""
    return {"timeout_s": limits.wall_s, "cpu_s": limits.cpu_s, "memory_mb": limits.memory_mb}


def with_gate_limits(criterion: Criterion, caps: Mapping[str, float | int | None]) -> Criterion:
    """`criterion` with the caps in `caps` (keys from `GATE_KEYS`) replacing its own.

    A criterion that runs no program is returned as it is: it has no caps to set.
    """
    limits = gate_limits(criterion)
    if limits is None:
        return criterion
    changes: dict[str, Any] = {}
    for key, field in (("timeout_s", "wall_s"), ("cpu_s", "cpu_s"), ("memory_mb", "memory_mb")):
        if caps.get(key) is not None:
            changes[field] = caps[key]
    if not changes:
        return criterion
    new: Criterion = dataclasses.replace(criterion, limits=dataclasses.replace(limits, **changes))  # type: ignore[type-var]
    return new

"""Criteria by their stored `kind`: one table, as `core.events.EVENT_TYPES` is for events."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ioh_tui.core.errors import ConfigError
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

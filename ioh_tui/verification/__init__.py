"""Success criteria: how a run knows it is done. Each is checked after every step."""

from ioh_tui.verification.criteria import (
    Command,
    Criterion,
    FileContains,
    FileEquals,
    GateOutcome,
    NoGate,
    WorkspaceFileContains,
    criterion_from_dict,
)

__all__ = [
    "Command",
    "Criterion",
    "FileContains",
    "FileEquals",
    "GateOutcome",
    "NoGate",
    "WorkspaceFileContains",
    "criterion_from_dict",
]

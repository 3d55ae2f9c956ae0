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
from ioh_tui.verification.documents import DocumentContains
from ioh_tui.verification.rust import (
    CompilesRust,
    EachCompilesRust,
    RustTestPasses,
    WorkspaceTestPasses,
)

__all__ = [
    "Command",
    "CompilesRust",
    "Criterion",
    "DocumentContains",
    "EachCompilesRust",
    "FileContains",
    "FileEquals",
    "GateOutcome",
    "NoGate",
    "RustTestPasses",
    "WorkspaceFileContains",
    "WorkspaceTestPasses",
    "criterion_from_dict",
]

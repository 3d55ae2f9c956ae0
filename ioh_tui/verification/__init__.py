"""Success criteria: how a run knows it is done. Each is checked after every step."""

from ioh_tui.verification.base import Criterion, GateOutcome
from ioh_tui.verification.codec import CRITERION_TYPES, criterion_from_dict
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

__all__ = [
    "CRITERION_TYPES",
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

"""The SQLite trace: runs, steps, transcript, tool calls, decisions, accounting, gates, leases."""

from ioh_tui.store.db import Store
from ioh_tui.store.rows import (
    ApprovalRow,
    AttemptRow,
    CallRecord,
    EventRow,
    GateAttemptRow,
    MessageRow,
    PolicyEventRow,
    ProviderCallRow,
    RunRow,
    SandboxEventRow,
    StepRow,
    ToolCallRow,
)
from ioh_tui.store.runs import SpawnCall
from ioh_tui.store.steps import StepCommit

__all__ = [
    "ApprovalRow",
    "AttemptRow",
    "CallRecord",
    "EventRow",
    "GateAttemptRow",
    "MessageRow",
    "PolicyEventRow",
    "ProviderCallRow",
    "RunRow",
    "SandboxEventRow",
    "SpawnCall",
    "StepCommit",
    "StepRow",
    "Store",
    "ToolCallRow",
]

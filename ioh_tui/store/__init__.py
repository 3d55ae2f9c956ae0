"""The SQLite trace: runs, steps, transcript, tool calls, decisions, accounting, gates, leases."""

from ioh_tui.store.db import Store
from ioh_tui.store.errors import StoreError
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
from ioh_tui.store.trace import LoggedEvent

__all__ = [
    "ApprovalRow",
    "AttemptRow",
    "CallRecord",
    "EventRow",
    "GateAttemptRow",
    "LoggedEvent",
    "MessageRow",
    "PolicyEventRow",
    "ProviderCallRow",
    "RunRow",
    "SandboxEventRow",
    "SpawnCall",
    "StepCommit",
    "StepRow",
    "Store",
    "StoreError",
    "ToolCallRow",
]

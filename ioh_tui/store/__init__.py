"""The SQLite trace: runs, steps, transcript, tool calls, decisions, accounting, gates, leases."""

from ioh_tui.store.db import RunRow, StepCommit, Store

__all__ = ["RunRow", "StepCommit", "Store"]

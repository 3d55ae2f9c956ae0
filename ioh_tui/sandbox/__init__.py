"""Containment for every command the agent or a gate runs: probe, select, run capped, tear down."""

from ioh_tui.core.errors import SandboxError
from ioh_tui.sandbox.base import (
    EXEC_LIMITS,
    GATE_LIMITS,
    CapHit,
    ExecResult,
    Limits,
    OutputSink,
    Sandbox,
)
from ioh_tui.sandbox.guard import GuardFor, guarded
from ioh_tui.sandbox.hidden import Guard, hidden_while_open
from ioh_tui.sandbox.probe import (
    BACKENDS,
    CAPABILITIES,
    RUNGS,
    Capabilities,
    ProbeReport,
    probe,
    probe_report,
    select,
)
from ioh_tui.sandbox.workdir import workdir

__all__ = [
    "BACKENDS",
    "CAPABILITIES",
    "EXEC_LIMITS",
    "GATE_LIMITS",
    "RUNGS",
    "CapHit",
    "Capabilities",
    "ExecResult",
    "Guard",
    "GuardFor",
    "Limits",
    "OutputSink",
    "ProbeReport",
    "Sandbox",
    "SandboxError",
    "guarded",
    "hidden_while_open",
    "probe",
    "probe_report",
    "select",
    "workdir",
]

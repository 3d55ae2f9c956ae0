"""One way to start a run: a request (what to run) and its parts (what to run it with).

`exec`, `run`, `resume`, the app, the demo and the queue all call `api.start(request, parts)`;
`run`, `run_tree` and `resume` in `api.py` are the Python names the contract keeps.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ioh_tui.engine.budgets import BudgetRaises
from ioh_tui.engine.bus import Observer
from ioh_tui.engine.cancel import CancelToken
from ioh_tui.engine.contract import TaskContract
from ioh_tui.engine.tree import Containment, Fleet
from ioh_tui.hooks import HookSet
from ioh_tui.mcp import ServerSpec
from ioh_tui.policy import Approver, Decision, Policy
from ioh_tui.providers.base import Provider
from ioh_tui.sandbox.base import Sandbox
from ioh_tui.store import Store


@dataclass(frozen=True, slots=True)
class NewRun:
    """Start a contract from its first step."""

    contract: TaskContract
    containment: Containment | None = None
    """When set, the agent may spawn sub-agents under these limits (a tree)."""
    driver: Mapping[str, str] = field(default_factory=dict)
    """The provider options (never a key), kept with the run so a resume needs none."""
    continues: tuple[int, ...] = ()
    """Earlier runs whose conversation this one carries on, oldest first (an ACP session's
    earlier prompts): kept with the run, and read before its own turns (`session.carried`)."""


@dataclass(frozen=True, slots=True)
class Resume:
    """Continue a stored run from its last committed step."""

    run_id: int
    decision: Decision | None = None
    """An answer to the run's pending decision, given up front (None: the approver is asked)."""
    overrides: Mapping[str, Any] = field(default_factory=dict)
    """Raised budgets (`max_steps`, `time_budget_s`, `token_budget`, `max_retries`,
    `max_total_tokens`)."""


RunRequest = NewRun | Resume


@dataclass(frozen=True, slots=True)
class Parts:
    """What a run is driven with; None picks the engine's default."""

    provider: Provider
    store: Store
    policy: Policy | None = None
    """None: `Policy.default()` for a new run, the stored policy for a resume."""
    approver: Approver | None = None
    """None: `DenyAll`."""
    sandbox: Sandbox | None = None
    """None: the strongest rung available."""
    observers: tuple[Observer, ...] = ()
    cancel: CancelToken | None = None
    raises: BudgetRaises | None = None
    """Where a supervisor puts budgets raised mid-run."""
    mcp: tuple[ServerSpec, ...] = ()
    """MCP servers started with each drive (the caller leaves out those not agreed to)."""
    hooks: HookSet | None = None
    """The configured hooks (None: none); a project's only once the user agreed to them."""
    fleet: Fleet | None = None
    """Where a tree's children are driven (None: in this process; `--ray`: a Ray cluster)."""

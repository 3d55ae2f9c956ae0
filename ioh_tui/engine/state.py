"""What one drive of a run holds: its parts, its identity in events, its running totals."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ioh_tui.core.transcript import Message
from ioh_tui.engine.bus import EventBus
from ioh_tui.engine.cancel import CancelToken
from ioh_tui.engine.contract import TaskContract
from ioh_tui.engine.gate import GateState
from ioh_tui.engine.gatework import GateWork
from ioh_tui.engine.ids import Who
from ioh_tui.policy import Approver
from ioh_tui.providers.base import Provider
from ioh_tui.sandbox.base import Sandbox
from ioh_tui.store import AttemptRow, Store
from ioh_tui.toolchain import Toolchain
from ioh_tui.tools import ToolSet, Workspace

if TYPE_CHECKING:
    from ioh_tui.engine.raises import BudgetRaises
    from ioh_tui.engine.tree import Tree


@dataclass(slots=True)
class Drive:
    """One drive of one run (a start or a resume) and everything it works with."""

    run_id: int
    contract: TaskContract
    provider: Provider
    store: Store
    sandbox: Sandbox
    approver: Approver
    bus: EventBus
    cancel: CancelToken
    gate: GateState
    tools: ToolSet
    workspace: Workspace
    who: Who
    agent_label: str = "root"
    lease_owner: str | None = None
    lease_generation: int | None = None
    history: list[Message] = field(default_factory=list)
    """The transcript after the system prompt and the task block."""
    tokens: int = 0
    """Tokens of committed steps, across every drive of the run."""
    journal: dict[tuple[int, int], AttemptRow] = field(default_factory=dict)
    """Completed journalled calls of an uncommitted step by (step, position): reused, not redone."""
    tree: Tree | None = None
    """The sub-agent tree this run belongs to (None: a flat run)."""
    who_depth: int = 0
    """Depth in the tree (the root is 0)."""
    first_step: int = 1
    """The step this drive started at (the only one a crashed drive may have staged)."""
    gate_checked: bool = False
    """Whether the criterion was evaluated in this drive (an unchanged workspace is not)."""
    toolchain: Toolchain | None = None
    """The workspace's detected project, once per drive (None: no marker, or single-file mode)."""
    project: str | None = None
    """`toolchain.describe()`: the `Project:` line of the task block, shown on every turn."""
    raises: BudgetRaises | None = None
    """Budgets a supervisor raised mid-run, taken at the next budget check (root agents only)."""
    gate_work: GateWork = field(default_factory=GateWork)
    """The gate commands' scratch directory: made at the first such gate, removed at the end."""

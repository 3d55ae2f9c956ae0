"""What one drive of a run works with (`Deps`, fixed) apart from what it changes (`RunState`).

A drive is one start or one resume of one run (an agent of a tree is a run of its own). The split
follows pydantic-ai's `GraphAgentDeps` / `GraphAgentState`: the loop reads `Deps` and writes
`RunState`; every other engine function takes only the few things it uses. The sub-agent tree is
reached through the `Spawner` protocol, so a flat run (`FLAT`) has no tree to branch on.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import Protocol

from ioh_tui.context import DEFAULT_WINDOW, Context
from ioh_tui.core.transcript import Message, ToolCall, Usage
from ioh_tui.engine.budgets import BudgetRaises
from ioh_tui.engine.bus import EventBus
from ioh_tui.engine.cancel import CancelToken
from ioh_tui.engine.contract import TaskContract
from ioh_tui.engine.decide import DecisionRules
from ioh_tui.engine.gatework import GateWork
from ioh_tui.engine.ids import Who
from ioh_tui.engine.instructions import Instructions
from ioh_tui.engine.stall import Progress
from ioh_tui.hooks import HookSet
from ioh_tui.mcp import ServerSpec
from ioh_tui.policy import Approver
from ioh_tui.providers.base import Provider
from ioh_tui.sandbox.base import Sandbox
from ioh_tui.skills import Skills
from ioh_tui.store import AttemptRow, Store
from ioh_tui.toolchain import Toolchain
from ioh_tui.tools import ToolResult, ToolSet, Workspace


@dataclass(frozen=True, slots=True)
class Deps:
    """What a drive works with: its parts and its identity, fixed for the drive."""

    run_id: int
    who: Who
    """How the drive's events name it."""
    provider: Provider
    store: Store
    sandbox: Sandbox
    approver: Approver
    tools: ToolSet
    workspace: Workspace
    bus: EventBus
    cancel: CancelToken
    spawner: Spawner
    """The sub-agent tree this run belongs to (`FLAT`: none)."""
    agent_label: str = "root"
    depth: int = 0
    """Depth in the tree (the root is 0)."""
    toolchain: Toolchain | None = None
    """The workspace's detected project, once per drive (None: no marker, or single-file mode)."""
    project: str | None = None
    """`toolchain.describe()`: the `Project:` line of the task block, shown on every turn."""
    instructions: Instructions | None = None
    """The project's `AGENTS.md` (or `CLAUDE.md`), pinned after the task block (workspace mode)."""
    raises: BudgetRaises | None = None
    """Budgets a supervisor raised mid-run, taken at the next budget check (root agents only)."""
    gate_work: GateWork = field(default_factory=GateWork)
    """The gate commands' scratch directory: made at the first such gate, removed at the end."""
    mcp: tuple[ServerSpec, ...] = ()
    """The MCP servers a root drive starts (its sub-agents share their tools)."""
    skills: Skills = field(default_factory=Skills)
    """The skills found for the workspace, named in every request (workspace mode)."""
    hooks: HookSet = field(default_factory=HookSet)
    """The configured hooks (a project's only once the user agreed to them); children share them."""


@dataclass(frozen=True, slots=True)
class Lease:
    """The drive's hold on its run: a commit under a stale generation is refused."""

    owner: str
    generation: int


@dataclass(slots=True)
class RunState:
    """What a drive changes as it goes."""

    contract: TaskContract
    """The contract in force (a supervisor's raises replace it)."""
    rules: DecisionRules
    """The policy and the rules remembered so far."""
    history: list[Message] = field(default_factory=list)
    """The transcript after the system prompt and the task block."""
    tokens: int = 0
    """Tokens of committed steps, across every drive of the run."""
    journal: dict[tuple[int, int], AttemptRow] = field(default_factory=dict)
    """Completed journalled calls of an uncommitted step by (step, position): reused, not redone."""
    first_step: int = 1
    """The step this drive started at (the only one a crashed drive may have staged)."""
    gate_checked: bool = False
    """Whether the criterion was evaluated in this drive (an unchanged workspace is not)."""
    lease: Lease | None = None
    context: Context = field(default_factory=lambda: Context(DEFAULT_WINDOW))
    """What the model is sent each turn, fitted to its window (`ask.prepare` sets it up)."""
    progress: Progress = field(default_factory=lambda: Progress(0))
    """Stall detection over the drive's steps."""
    notes: list[str] = field(default_factory=list)
    """The agent's notes (the `note` tool), pinned in every turn's context."""
    unbilled: list[Usage] = field(default_factory=list)
    """Model calls made for the step under way besides its turn (compactions): charged with it."""
    notifying: set[asyncio.Task[None]] = field(default_factory=set)
    """`notification` hooks under way (they never hold the run up; its end waits for them)."""


class Spawner(Protocol):
    """The sub-agent tree as the loop sees it."""

    @property
    def halt_reason(self) -> str | None:
        """Why every agent of the tree must stop (its token ceiling is spent), or None."""
        ...

    def handles(self, call: ToolCall) -> bool:
        """Whether `call` is a spawn this spawner runs (instead of the tool set)."""
        ...

    def spawn(
        self, parent: Deps, state: RunState, n: int, position: int, call: ToolCall
    ) -> Awaitable[ToolResult]:
        """Start (or refuse, or adopt) a child; the awaitable gives the parent's tool result."""
        ...

    def reports(self, run_id: int) -> list[Message]:
        """Reports of the agent's detached children that finished since it last looked."""
        ...

    async def drain(self, run_id: int) -> None:
        """Wait for the agent's detached children."""
        ...

    async def charge(self, tokens: int) -> str | None:
        """Charge a committed step's tokens to the tree; the halt reason once it is spent."""
        ...

    async def afford(self, tokens: int) -> str | None:
        """Whether the tree can pay for a prompt of `tokens`; else it halts, and says why."""
        ...


class Flat:
    """The spawner of a run that is not a tree: it spawns nothing and charges nothing."""

    halt_reason: str | None = None

    def handles(self, call: ToolCall) -> bool:
        """Never: a flat run's tool set answers a spawn call itself."""
        return False

    def spawn(
        self, parent: Deps, state: RunState, n: int, position: int, call: ToolCall
    ) -> Awaitable[ToolResult]:
        """Not reached (`handles` is always false)."""
        raise NotImplementedError("a flat run spawns nothing")

    def reports(self, run_id: int) -> list[Message]:
        """None: nothing is detached."""
        return []

    async def drain(self, run_id: int) -> None:
        """Nothing to wait for."""

    async def charge(self, tokens: int) -> str | None:
        """No ledger."""
        return None

    async def afford(self, tokens: int) -> str | None:
        """No ceiling."""
        return None


FLAT: Spawner = Flat()

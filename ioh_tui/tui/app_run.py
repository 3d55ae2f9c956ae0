"""What the app runs: the engine's request, with what the app alone adds to it.

The engine's `RunRequest` says what to run (`NewRun` carries a tree's containment, `Resume` the
answer and the raised budgets). The app adds the provider, policy and sandbox it drives the run
with and how the model is named on screen; the store is the app's, and the approver, observers,
stop switch and raised budgets are the run screen's and the supervisor's (`supervisor.drive`).
No Textual here.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

if TYPE_CHECKING:  # the app imports this module before its first frame: nothing heavy at run time
    from ioh_tui.engine import Resume, RunRequest, TaskContract
    from ioh_tui.hooks import HookSet
    from ioh_tui.mcp import ServerSpec
    from ioh_tui.policy import Policy
    from ioh_tui.providers.base import Provider
    from ioh_tui.sandbox.base import Sandbox
    from ioh_tui.tui.cluster import AppFleet, ClusterView


@dataclass(frozen=True, slots=True)
class AppRun:
    """One run for the app to drive."""

    request: RunRequest
    """What to run: a new run (or tree), or a stored run to resume."""
    provider: Provider
    """The model back-end."""
    policy: Policy | None = None
    """None: the engine's default, or the stored policy on resume."""
    sandbox: Sandbox | None = None
    """None: the strongest rung available."""
    label: str = ""
    """How the model is named on screen (default: `<model> via <provider>`)."""
    mcp: tuple[ServerSpec, ...] = ()
    """The MCP servers the run starts."""
    hooks: HookSet | None = None
    """The configured hooks (None: none)."""
    fleet: AppFleet | None = None
    """Where the tree's sub-agents run (`--ray`; None: here). Closed when the run ends."""


@dataclass(frozen=True, slots=True)
class ProjectSection:
    """A project section the user has not agreed to, as the trust modal shows it."""

    kind: str
    """`policy`, `hooks`, `mcp:NAME` or `rules` (config/trust.py)."""
    title: str
    file: Path
    body: str
    """Exactly what would be used, as text."""


@dataclass(frozen=True, slots=True)
class TrustQuestion:
    """What the app asks before a run whose project carries sections not yet agreed to."""

    sections: tuple[ProjectSection, ...]
    agree: Callable[[str], None]
    """Records the user's agreement to one kind (so it is not asked again)."""
    rebuild: Callable[[], AppRun]
    """The run, built again with what is now agreed to (called only when something was)."""


PartsSource = Callable[[], AbstractAsyncContextManager[AppRun]]
"""Opens a run for its length (the demo copies a workspace and starts a loopback server)."""

Resumer: TypeAlias = "Callable[[Resume, dict[str, Any]], AppRun]"
"""Builds the run that continues a stored one, from the request and the run's stored contract."""


def given(run: AppRun) -> PartsSource:
    """A parts source that yields `run` as it is (nothing to open or close)."""

    @asynccontextmanager
    async def source() -> AsyncIterator[AppRun]:
        yield run

    return source


@dataclass(frozen=True, slots=True)
class RunContext:
    """What the screen is told before the first event: facts the events do not carry."""

    goal: str
    root: Path
    criterion: str | None
    """The success criterion's description; None when the run has none."""
    label: str
    """The model as shown on screen."""
    cluster: ClusterView | None = None
    """The cluster the tree's sub-agents run on (`--ray`; None: they run in this process)."""


def run_context(contract: TaskContract, run: AppRun) -> RunContext:
    """The context of `run` under `contract` (the request's, or the stored one on resume)."""
    from ioh_tui.verification import NoGate

    criterion = (
        None if isinstance(contract.verification, NoGate) else contract.verification.describe()
    )
    label = run.label or f"{run.provider.model or 'unknown model'} via {run.provider.name}"
    return RunContext(contract.goal, contract.root, criterion, label, run.fleet)

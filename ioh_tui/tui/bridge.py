"""The bridge between the engine and the app: what to run, the observer, the approver, the drive.

The engine never sees a widget. It calls `EventForwarder` (an observer) with each event, which
posts one `EngineEventMessage` and returns at once; it asks `TuiApprover`, which posts an
`ApprovalNeeded` carrying a future and awaits it. `drive` is the body of the app's run worker.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

from textual.message_pump import MessagePump

from ioh_tui.core.events import Event
from ioh_tui.engine import (
    BudgetRaises,
    CancelToken,
    Containment,
    NewRun,
    Resume,
    RunRequest,
    RunResult,
    TaskContract,
    start,
)
from ioh_tui.engine import Parts as EngineParts
from ioh_tui.policy import ApprovalRequest, Decision, Policy
from ioh_tui.providers.base import Provider
from ioh_tui.sandbox.base import Sandbox
from ioh_tui.store import Store
from ioh_tui.tui.messages import ApprovalNeeded, EngineEventMessage
from ioh_tui.verification import NoGate

RunMode = Literal["demo", "run", "resume"]


class Parts(Protocol):
    """What a run is built from (the demo's `demo_parts()` yields an object of this shape)."""

    @property
    def contract(self) -> TaskContract | None:
        """The task contract (None when resuming: it comes from the store)."""
        ...

    @property
    def provider(self) -> Provider:
        """The model back-end."""
        ...

    @property
    def policy(self) -> Policy | None:
        """The policy (None: the engine's default, or the stored one on resume)."""
        ...

    @property
    def sandbox(self) -> Sandbox | None:
        """The sandbox (None: the strongest available)."""
        ...

    @property
    def label(self) -> str:
        """How the model is named on screen (the demo says `scripted demo model`)."""
        ...


# A parts object may also carry `containment` (a `Containment`): the run is then a sub-agent tree.


PartsSource = Callable[[], AbstractAsyncContextManager[Parts]]
"""Opens the parts for the length of a run (the demo copies a workspace and starts a server)."""


@dataclass(frozen=True, slots=True)
class RunParts:
    """Parts given directly (tests, `ioh-tui run`, `ioh-tui resume`)."""

    provider: Provider
    contract: TaskContract | None = None
    policy: Policy | None = None
    sandbox: Sandbox | None = None
    label: str = ""
    containment: Containment | None = None
    """When set, the agent may spawn sub-agents under these limits (`run_tree`)."""


@dataclass(frozen=True, slots=True)
class RunPlan:
    """Everything the run worker needs: where the store is, what to run, and how."""

    store_path: Path
    mode: RunMode
    parts: PartsSource
    run_id: int | None = None
    """The run to resume (mode `resume`)."""
    decision: Decision | None = None
    """An answer to a resumed run's pending decision, given up front."""
    overrides: dict[str, Any] | None = None
    """Raised budgets for a resume."""


@dataclass(frozen=True, slots=True)
class RunContext:
    """What the screen is told before the first event: facts the events do not carry."""

    goal: str
    root: Path
    criterion: str | None
    """The success criterion's description; None when the run has none."""
    label: str
    """The model as shown on screen."""


def given(parts: RunParts) -> PartsSource:
    """A parts source that yields `parts` as they are (nothing to open or close)."""

    @asynccontextmanager
    async def source() -> AsyncIterator[Parts]:
        yield parts

    return source


class EventForwarder:
    """An engine observer that posts each event to `target` as one message; it never blocks."""

    def __init__(self, target: MessagePump) -> None:
        self._target = target
        self.posted = 0
        """How many events were forwarded (the benchmark reads it)."""

    def __call__(self, event: Event) -> None:
        """Forward one event."""
        # post_message only appends to the target's queue, so the engine's loop never waits on
        # rendering; the screen drains the queue at its own pace.
        self._target.post_message(EngineEventMessage(event))
        self.posted += 1


class TuiApprover:
    """An `Approver` that asks the person at the screen and waits as long as it takes."""

    def __init__(self, target: MessagePump) -> None:
        self._target = target

    async def decide(self, request: ApprovalRequest) -> Decision:
        """Post the request with a future, then wait for the modal's answer.

        If the engine stops waiting (the run was cancelled, or another process answered), the
        await is cancelled, which cancels the future; the screen sees that and closes the modal.
        """
        future: asyncio.Future[Decision] = asyncio.get_running_loop().create_future()
        self._target.post_message(ApprovalNeeded(request, future))
        return await future


def _label(parts: Parts) -> str:
    if parts.label:
        return parts.label
    provider = parts.provider
    return f"{provider.model or 'unknown model'} via {provider.name}"


async def drive(
    plan: RunPlan,
    *,
    forwarder: EventForwarder,
    approver: TuiApprover,
    cancel: CancelToken,
    tell: Callable[[RunContext], None],
    raises: BudgetRaises | None = None,
) -> RunResult:
    """Open the parts and the store, tell the screen the context, and run (or resume) to the end.

    Args:
        plan: What to run.
        forwarder: The observer posting events to the screen.
        approver: The approver asking the person.
        cancel: The token the app trips to stop the run.
        tell: Called once with the run's context before the engine starts.
        raises: Where the app puts budgets raised mid-run.

    Returns:
        How the run ended.
    """
    async with plan.parts() as parts, Store.open(plan.store_path) as store:
        try:
            if plan.mode == "resume":
                if plan.run_id is None:
                    raise ValueError("resume needs a run id")
                row = await store.run(plan.run_id)
                stored = TaskContract.from_dict(row.contract)
                tell(_context(stored, parts))
                request: RunRequest = Resume(plan.run_id, plan.decision, plan.overrides or {})
            else:
                contract = parts.contract
                if contract is None:
                    raise ValueError("a new run needs a task contract")
                tell(_context(contract, parts))
                containment = getattr(parts, "containment", None)
                tree = containment if isinstance(containment, Containment) else None
                request = NewRun(contract, tree)
            engine_parts = EngineParts(
                parts.provider,
                store,
                policy=parts.policy,
                approver=approver,
                sandbox=parts.sandbox,
                observers=(forwarder,),
                cancel=cancel,
                raises=raises,
            )
            return await start(request, engine_parts)
        finally:
            await parts.provider.aclose()


def _context(contract: TaskContract, parts: Parts) -> RunContext:
    criterion = (
        None if isinstance(contract.verification, NoGate) else contract.verification.describe()
    )
    return RunContext(
        goal=contract.goal, root=contract.root, criterion=criterion, label=_label(parts)
    )

"""The child's side: its store, events, approver and tree are calls to the root.

A child on a node holds no store of its own: every store call, every ask and every ledger draw
is a request to the root (`server.py`), answered from the root's one store, approver and tree, so
the trace, the ledger and the decision queue hold for the whole tree as on one machine. Events
are batched and travel ahead of the next request (or after a short delay), in order.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from ioh_tui.core.events import Event
from ioh_tui.core.transcript import Message, ToolCall
from ioh_tui.engine.state import Deps, RunState
from ioh_tui.fleet.wire import Reply, Request, restored
from ioh_tui.policy import Decision
from ioh_tui.policy.approver import ApprovalRequest
from ioh_tui.tools import ToolResult
from ioh_tui.tools.registry import SPAWN_AGENT

EVENT_DELAY_S = 0.05
"""How long an event waits for a request to ride on before it is sent alone."""


class Link:
    """One child's line to the root, through the mailbox actor (`hub`)."""

    def __init__(self, hub: Any, child: int, epoch: int) -> None:
        self._hub = hub
        self.child = child
        self.epoch = epoch
        self._seq = 0
        self._events: list[Event] = []
        self._timer: asyncio.TimerHandle | None = None
        self._sending: set[asyncio.Task[Any]] = set()
        self.halt_reason: str | None = None
        """The tree's halt reason, as of the latest reply."""
        self.inbox: list[Message] = []
        """Reports of detached children, as replies brought them."""

    async def call(self, op: str, *args: Any, **kwargs: Any) -> Any:
        """Send one request (after the events emitted before it) and wait for its answer."""
        self._seq += 1
        events, self._events = tuple(self._events), []
        request = Request(self.child, self.epoch, self._seq, op, args, kwargs, events)
        try:
            reply: Reply = await self._hub.call.remote(request)
        except asyncio.CancelledError:
            # The loop gave up on the call (a decision answered in the store ends the wait on
            # the approver): the root stops serving it too, as a local await is cancelled.
            self._seq += 1
            self._hub.call.remote(
                Request(self.child, self.epoch, self._seq, "cancel", (request.seq,))
            )
            raise
        self.halt_reason = reply.halt
        self.inbox.extend(reply.reports)
        if reply.error is not None:
            raise restored(reply.error)
        return reply.value

    def emit(self, event: Event) -> None:
        """Queue an event; it leaves with the next request, or on its own shortly."""
        self._events.append(event)
        if self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(EVENT_DELAY_S, self._flush)

    def _flush(self) -> None:
        self._timer = None
        if self._events:
            task = asyncio.ensure_future(self.call("events"))
            self._sending.add(task)
            task.add_done_callback(self._sending.discard)

    async def close(self) -> None:
        """Send what is queued and wait until the root has it."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._events:
            await self.call("events")
        if self._sending:
            await asyncio.gather(*self._sending, return_exceptions=True)


class RemoteStore:
    """The root's store, method by method (every `Store` method the loop calls is async)."""

    def __init__(self, link: Link) -> None:
        self._link = link

    def __getattr__(self, name: str) -> Callable[..., Awaitable[Any]]:
        if name.startswith("_"):
            raise AttributeError(name)

        async def call(*args: Any, **kwargs: Any) -> Any:
            return await self._link.call("store", name, *args, **kwargs)

        return call


class RemoteApprover:
    """The root's approver: the app's modal and queue, or `--on-approval`, as for a local child."""

    def __init__(self, link: Link) -> None:
        self._link = link

    async def decide(self, request: ApprovalRequest) -> Decision:
        """Ask the root."""
        decision: Decision = await self._link.call("decide", request)
        return decision


class RemoteTree:
    """The tree as the child's loop sees it (`Spawner`): the root's, through the link."""

    def __init__(self, link: Link) -> None:
        self._link = link

    @property
    def halt_reason(self) -> str | None:
        """The tree's halt reason as of the latest reply (every step makes several calls)."""
        return self._link.halt_reason

    def handles(self, call: ToolCall) -> bool:
        """Spawn calls are the tree's."""
        return call.name == SPAWN_AGENT

    def spawn(
        self, parent: Deps, state: RunState, n: int, position: int, call: ToolCall
    ) -> Awaitable[ToolResult]:
        """The root admits and places the grandchild; the child sends what admission reads."""
        rules, contract, tokens = state.rules, state.contract, state.tokens
        return self._link.call("spawn", n, position, call, contract, rules, tokens)

    def reports(self, run_id: int) -> list[Message]:
        """Reports the replies brought since the agent last looked."""
        taken, self._link.inbox[:] = list(self._link.inbox), []
        return taken

    async def drain(self, run_id: int) -> None:
        """Wait at the root for the child's own children."""
        await self._link.call("drain")

    async def charge(self, tokens: int) -> str | None:
        """Draw on the tree's one ledger."""
        halted: str | None = await self._link.call("charge", tokens)
        return halted

    async def afford(self, tokens: int) -> str | None:
        """Ask the tree's ledger whether a prompt fits."""
        halted: str | None = await self._link.call("afford", tokens)
        return halted

"""The root's side: a mailbox actor on the root's node, and the pump that serves it.

Ray cannot call into the driver, so children call the mailbox (`Mailbox`, an async actor pinned
to the root's node) and the root's pump (`Server`) takes what arrived, serves each request from
the real store, bus, approver and tree, and posts the answer back. One child's requests are
served in the order it sent them (its `seq`); its events are delivered before the request they
rode on. A request from an actor that was replaced (an older `epoch`) is refused.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from dataclasses import dataclass, field
from typing import Any

from ioh_tui.engine.contract import TaskContract
from ioh_tui.engine.decide import DecisionRules
from ioh_tui.engine.state import Deps, RunState
from ioh_tui.fleet.mcp import call_root_server, read_root_resource
from ioh_tui.fleet.wire import Reply, Request, Stale, portable

log = logging.getLogger(__name__)


class Mailbox:
    """The actor's body (made a Ray actor in `placement.py`): requests in, answers out."""

    def __init__(self) -> None:
        self._queue: asyncio.Queue[tuple[int, Request]] = asyncio.Queue()
        self._waiting: dict[int, asyncio.Future[Reply]] = {}
        self._next = 0

    async def call(self, request: Request) -> Reply:
        """A child's request: wait until the root answers it."""
        self._next += 1
        key = self._next
        answer: asyncio.Future[Reply] = asyncio.get_running_loop().create_future()
        self._waiting[key] = answer
        self._queue.put_nowait((key, request))
        return await answer

    async def take(self) -> list[tuple[int, Request]]:
        """Everything that arrived (at least one request: it waits for the first)."""
        batch = [await self._queue.get()]
        while not self._queue.empty():
            batch.append(self._queue.get_nowait())
        return batch

    def answer(self, replies: list[tuple[int, Reply]]) -> None:
        """Hand answers to the children waiting on them."""
        for key, reply in replies:
            waiting = self._waiting.pop(key, None)
            if waiting is not None and not waiting.done():
                waiting.set_result(reply)


@dataclass(slots=True)
class _Child:
    """One child as the pump knows it: its real parts, its order, its draws."""

    deps: Deps
    epoch: int = 0
    expected: int = 1
    held: dict[int, tuple[int, Request]] = field(default_factory=dict)
    serving: set[asyncio.Task[None]] = field(default_factory=set)
    by_seq: dict[int, asyncio.Task[None]] = field(default_factory=dict)
    """The request each task serves (a child that gives up on a call cancels it here too)."""
    charged: int = 0
    """Tokens this child drew on the ledger (a dead actor's missed draws are made up from it)."""


class Server:
    """The pump: serves the mailbox from the root's parts, in the root's event loop."""

    def __init__(self, mailbox: Any) -> None:
        self._mailbox = mailbox
        self._children: dict[int, _Child] = {}
        self._task: asyncio.Task[None] | None = None
        self.served = 0
        """Requests served so far (what crossed the network; the benchmark reports it)."""

    def start(self) -> None:
        """Start pumping in the running loop (once)."""
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._pump(), name="fleet-pump")

    async def stop(self) -> None:
        """Stop pumping, and serving what a dead actor left waiting (an ask, a drain)."""
        tasks = [t for child in self._children.values() for t in child.serving]
        if self._task is not None:
            tasks.append(self._task)
            self._task = None
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def open(self, deps: Deps, epoch: int) -> None:
        """Serve `deps`'s child from the actor of `epoch` (a new actor starts its `seq` at 1)."""
        child = self._children.get(deps.run_id)
        if child is None:
            child = self._children[deps.run_id] = _Child(deps)
        child.epoch, child.expected, child.held = epoch, 1, {}

    def charged(self, run_id: int) -> int:
        """Tokens the child drew on the ledger so far."""
        return self._children[run_id].charged

    async def settled(self, run_id: int) -> None:
        """Wait until every request of the child that reached the root has been served."""
        child = self._children[run_id]
        while child.serving:
            await asyncio.gather(*list(child.serving), return_exceptions=True)

    def close(self, run_id: int) -> None:
        """The child is done: what it left waiting (a dead actor's ask) is not served."""
        child = self._children.pop(run_id, None)
        for task in child.serving if child is not None else ():
            task.cancel()

    async def _pump(self) -> None:
        while True:
            batch = await self._mailbox.take.remote()
            for key, request in batch:
                self._receive(key, request)

    def _receive(self, key: int, request: Request) -> None:
        child = self._children.get(request.child)
        if child is None or request.epoch != child.epoch:
            why = f"actor epoch {request.epoch} of run {request.child} was replaced"
            self._mailbox.answer.remote([(key, Reply(error=Stale(why)))])
            return
        child.held[request.seq] = (key, request)
        while child.expected in child.held:
            key, request = child.held.pop(child.expected)
            child.expected += 1
            self.served += 1
            for event in request.events:
                child.deps.bus.emit(event)
            if request.op == "cancel":
                cancelled = child.by_seq.get(request.args[0])
                if cancelled is not None:
                    cancelled.cancel()
                self._mailbox.answer.remote([(key, Reply())])
                continue
            task = asyncio.ensure_future(self._serve(child, key, request))
            child.serving.add(task)
            child.by_seq[request.seq] = task
            task.add_done_callback(child.serving.discard)
            task.add_done_callback(functools.partial(_forget, child.by_seq, request.seq))

    async def _serve(self, child: _Child, key: int, request: Request) -> None:
        reply: Reply
        try:
            value = await self._op(child, request)
            reply = Reply(value)
        except Exception as exc:
            reply = Reply(error=portable(exc))
        tree = child.deps.spawner
        reports = tuple(tree.reports(child.deps.run_id)) if request.op != "events" else ()
        reply = Reply(reply.value, reply.error, tree.halt_reason, reports)
        self._mailbox.answer.remote([(key, reply)])

    async def _op(self, child: _Child, request: Request) -> Any:
        p, args = child.deps, request.args
        match request.op:
            case "events":
                return None
            case "store":
                name, *rest = args
                return await getattr(p.store, name)(*rest, **request.kwargs)
            case "decide":
                return await p.approver.decide(args[0])
            case "charge":
                child.charged += args[0]
                return await p.spawner.charge(args[0])
            case "afford":
                return await p.spawner.afford(args[0])
            case "drain":
                return await p.spawner.drain(p.run_id)
            case "spawn":
                return await self._spawn(p, *args)
            case "mcp":
                return await call_root_server(p, *args)
            case "mcp_read":
                return await read_root_resource(p, *args)
        raise ValueError(f"unknown fleet request {request.op!r}")

    async def _spawn(
        self,
        p: Deps,
        n: int,
        position: int,
        call: Any,
        contract: TaskContract,
        rules: DecisionRules,
        tokens: int,
    ) -> Any:
        """A remote child's spawn, admitted by the root's tree as a local one is."""
        state = RunState(contract, rules, tokens=tokens)
        return await p.spawner.spawn(p, state, n, position, call)


def _forget(by_seq: dict[int, asyncio.Task[None]], seq: int, _: asyncio.Task[None]) -> None:
    by_seq.pop(seq, None)

"""The fleet a tree is given under `--ray`: each child is driven by a Ray actor on some node.

`connect` joins (or starts) the cluster; the tree drives each child through `RayFleet.drive`
instead of the loop's `drive` (the `Fleet` seam in `engine/tree.py`). Actors are kept in a
pool and reused: starting one is a new worker process, and a tree runs many children.

Faults: an actor (or its node) that dies mid-child is noticed by the Ray call failing. The
child then resumes on a new actor from its last committed step, read back from the root's store
(the journal decides what was applied, as after a crash on one machine). Ray's own retries are
off (`max_restarts=0`, `max_task_retries=0`): a late call from the dead actor is refused by its
epoch, and tokens it committed but did not draw are drawn once, so the ledger is unchanged.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ioh_tui.core.control import RunCancelled
from ioh_tui.core.errors import ConfigError
from ioh_tui.core.transcript import Message
from ioh_tui.engine.contract import RunResult
from ioh_tui.engine.session import resumed_state
from ioh_tui.engine.state import Deps, RunState
from ioh_tui.engine.tree import Driver
from ioh_tui.fleet.census import Census, NodeFacts, census_of
from ioh_tui.fleet.copies import Patch, apply, marker, pack
from ioh_tui.fleet.server import Mailbox, Server
from ioh_tui.fleet.worker import ChildWorker, Done, spec_for

MAX_RESTARTS = 3
"""How often one child may lose its actor before it is given up (`failed`)."""

Workspaces = Literal["auto", "shared", "copy"]
"""How children reach the root's workspace: found out per node, or forced."""

ANSWER_S = 5.0
"""How long `--ray HOST:PORT` waits for the cluster's head to accept a connection."""
MISSING_EXTRA = "--ray needs the ray extra: pip install 'ioh-tui[ray]'"


def connect(
    address: str, *, cpus_per_child: float = 1.0, workspaces: Workspaces = "auto"
) -> RayFleet:
    """Join the cluster at `address` (`auto`: a running one; `local`: start one here).

    `workspaces`: `auto` finds out for each actor whether its node shares the root's workspace
    (`copies.py`); `shared` and `copy` force one way (the tests force both on one machine).

    Raises:
        ConfigError: Ray is not installed, or the cluster cannot be reached.
    """
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    if address == "local":
        # Read when Ray is imported: a local cluster finds its address without asking the route
        # towards the internet (Ray's cluster mode does), so it binds loopback only.
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    try:
        import ray
    except ImportError:
        raise ConfigError(MISSING_EXTRA) from None
    if ray.is_initialized():  # joined already (the tests' cluster): used as it is
        return RayFleet(cpus_per_child, False, workspaces)
    if address not in ("auto", "local"):
        _answers(address)
    options: dict[str, Any] = {"log_to_driver": False, "configure_logging": False}
    if address == "local":
        options.update(include_dashboard=False, _node_ip_address="127.0.0.1")
    try:
        ray.init(address=address, **options)
    except (ConnectionError, ValueError, RuntimeError) as exc:
        raise ConfigError(f"--ray {address}: {exc}") from None
    return RayFleet(cpus_per_child, True, workspaces)


def _answers(address: str) -> None:
    """Refuse at once an address where nothing listens (Ray itself retries for minutes).

    Raises:
        ConfigError: Nothing accepts a connection at `address` (HOST:PORT).
    """
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        raise ConfigError(f"--ray {address}: give auto, local or HOST:PORT")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=ANSWER_S).close()
    except OSError as exc:
        raise ConfigError(f"--ray {address}: no cluster answers there ({exc})") from None


@dataclass(slots=True)
class RayFleet:
    """Children on Ray actors; the root's store, bus, approver and tree serve them."""

    cpus_per_child: float = 1.0
    owns_cluster: bool = False
    """Whether `connect` started Ray here (then `close` shuts it down)."""
    workspaces: Workspaces = "auto"
    placed: dict[int, str] = field(default_factory=dict)
    """The node each child runs on, or last ran on, by run id (set as its actor starts it)."""
    restarts: int = 0
    """Children resumed on a new actor after theirs died."""
    busy: dict[int, Any] = field(default_factory=dict)
    """The actor driving each child now, by run id."""
    _server: Server | None = None
    _mailbox: Any = None
    _idle: list[_Member] = field(default_factory=list)
    _markers: dict[Path, tuple[str, str]] = field(default_factory=dict)
    _ray_lock: threading.Lock = field(default_factory=threading.Lock)
    """Held by `census` (another thread) and by the shutdown in `close`."""

    @property
    def served(self) -> int:
        """Requests the children sent to the root so far."""
        return 0 if self._server is None else self._server.served

    def driver(self, drive: Driver) -> Driver:
        """The tree's driver for its children: this fleet's (the loop's `drive` runs remotely)."""
        return self.drive

    async def drive(self, p: Deps, s: RunState, start: int, *, recheck: bool = False) -> RunResult:
        """Drive one child on an actor to its outcome; a dead actor's child resumes on another."""
        server = self._serve()
        base, epoch = s.tokens, 0
        try:
            while True:
                epoch += 1
                server.open(p, epoch)
                member = await self._member()
                node = "not yet known"
                try:
                    self.placed[p.run_id] = node = await self._where(member)
                    await self._record(p, start, "placed", f"on ray node {node}")
                    copy = await self._copy(member, p)
                    done = await self._run(member.actor, p, s, start, recheck, epoch, copy)
                except _lost() as exc:
                    await self._lost(member.actor)
                    if epoch > MAX_RESTARTS:
                        raise RuntimeError(f"run {p.run_id} lost {epoch} actors: {exc}") from None
                    server.open(p, epoch + 1)  # the dead actor's late calls are refused now
                    await server.settled(p.run_id)
                    start = await self._resumed(p, s, base, server)
                    why = f"{type(exc).__name__}: resumed from step {start} on another actor"
                    await self._record(p, start, "actor_lost", f"on ray node {node}: {why}")
                    recheck = start > 1
                    self.restarts += 1
                    continue
                self._idle.append(member)
                self.placed[p.run_id] = done.node
                s.history[:] = done.history
                s.tokens = done.tokens
                if done.patch is not None:
                    await self._apply(p, s, done.patch)
                return done.result
        finally:
            server.close(p.run_id)

    async def _record(self, p: Deps, step: int, kind: str, detail: str) -> None:
        """Where the child runs, in its trace (`show`): the app's placement outlives the run."""
        await p.store.add_sandbox_event(p.run_id, step, kind, p.sandbox.backend, detail)

    async def _run(
        self,
        actor: Any,
        p: Deps,
        s: RunState,
        start: int,
        recheck: bool,
        epoch: int,
        copy: bytes | None,
    ) -> Done:
        spec = spec_for(p, s, start, recheck, epoch, copy)
        watch = asyncio.ensure_future(_cancel_on_trip(p, actor))
        self.busy[p.run_id] = actor
        try:
            done: Done = await actor.drive.remote(spec, self._mailbox)
        finally:
            watch.cancel()
            self.busy.pop(p.run_id, None)
        return done

    async def _resumed(self, p: Deps, s: RunState, base: int, server: Server) -> int:
        """Read the child's state back from the store into `s`, make its missed ledger draws once.

        `s` is the tree's (it reports the child's last words from it), so it is updated in place.
        The step to go on from is returned.
        """
        row = await p.store.run(p.run_id)
        state, last = await resumed_state(p.store, p.run_id, s.contract, s.rules, row.tokens)
        s.history[:], s.tokens, s.journal = state.history, state.tokens, state.journal
        missed = row.tokens - base - server.charged(p.run_id)
        if missed > 0:
            await p.spawner.charge(missed)
        return last + 1

    def _serve(self) -> Server:
        import ray
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        if self._server is None:
            here = ray.get_runtime_context().get_node_id()
            mailbox = ray.remote(Mailbox).options(
                num_cpus=0,
                scheduling_strategy=NodeAffinitySchedulingStrategy(here, soft=False),
            )
            self._mailbox = mailbox.remote()
            self._server = Server(self._mailbox)
        self._server.start()
        return self._server

    async def _where(self, member: _Member) -> str:
        """The node an actor runs on (asked once: it waits for the actor to have started)."""
        if member.node is None:
            member.node = str(await member.actor.node.remote())
        return member.node

    def census(self) -> Census | None:
        """The cluster now: alive nodes, free and total CPUs, node labels (None: Ray is shut down).

        Blocking (Ray asks its control store): the app calls it in a thread, never in its loop.
        """
        import ray

        with self._ray_lock:
            if not ray.is_initialized():
                return None
            nodes = [
                NodeFacts(str(n["NodeID"]), str(n.get("NodeManagerAddress", "")), bool(n["Alive"]))
                for n in ray.nodes()  # type: ignore[no-untyped-call]
            ]
            free = float(ray.available_resources().get("CPU", 0.0))  # type: ignore[no-untyped-call]
            total = float(ray.cluster_resources().get("CPU", 0.0))  # type: ignore[no-untyped-call]
            here = str(ray.get_runtime_context().get_node_id())
        return census_of(nodes, here, free, total)

    async def _copy(self, member: _Member, p: Deps) -> bytes | None:
        """The workspace packed for an actor whose node does not share it (None: it does)."""
        root = p.workspace.root
        if self.workspaces == "auto" and member.shares is None:
            if root not in self._markers:
                self._markers[root] = await asyncio.to_thread(marker, root)
            member.shares = bool(await member.actor.shares.remote(self._markers[root]))
        if self.workspaces == "shared" or (self.workspaces == "auto" and member.shares):
            return None
        return await asyncio.to_thread(pack, root)

    async def _apply(self, p: Deps, s: RunState, patch: Patch) -> None:
        """Apply a copy's patch where the child's policy allows; its report says what was not."""
        done = await asyncio.to_thread(apply, p.workspace.root, patch, s.rules.effective())
        if summary := done.summary():
            s.history.append(Message("assistant", f"{_said(s.history)}\n{summary}".strip()))

    async def _member(self) -> _Member:
        if self._idle:
            return self._idle.pop()
        return _Member(await self._actor())

    async def _actor(self) -> Any:
        import ray

        worker = ray.remote(ChildWorker).options(
            num_cpus=self.cpus_per_child,
            max_restarts=0,
            max_task_retries=0,
            max_concurrency=4,
            scheduling_strategy="SPREAD",
        )
        return worker.remote()

    async def _lost(self, actor: Any) -> None:
        import ray

        with contextlib.suppress(Exception):
            ray.kill(actor, no_restart=True)

    async def close(self) -> None:
        """Stop serving and end the actors; shut Ray down if `connect` started it."""
        import ray

        if self._server is not None:
            await self._server.stop()
        for actor in [*(m.actor for m in self._idle), self._mailbox]:
            if actor is not None:
                with contextlib.suppress(Exception):
                    ray.kill(actor, no_restart=True)
        self._idle.clear()
        self._server = self._mailbox = None
        for path, _ in self._markers.values():
            await asyncio.to_thread(Path(path).unlink, missing_ok=True)
        self._markers.clear()
        if self.owns_cluster:
            with self._ray_lock:
                ray.shutdown()


@dataclass(slots=True)
class _Member:
    """An actor of the pool, and whether its node shares the root's workspace (None: not asked)."""

    actor: Any
    shares: bool | None = None
    node: str | None = None
    """The node it runs on (None: not asked)."""


def _said(history: list[Message]) -> str:
    return next((m.content for m in reversed(history) if m.role == "assistant" and m.content), "")


def _lost() -> tuple[type[BaseException], ...]:
    """The Ray errors that mean the actor (or its node) is gone."""
    from ray import exceptions as rx

    return (rx.RayActorError, rx.WorkerCrashedError, rx.NodeDiedError, rx.ObjectLostError)


async def _cancel_on_trip(p: Deps, actor: Any) -> None:
    """Pass the root's cancellation to the actor driving the child."""
    try:
        await p.cancel.guard(asyncio.Event().wait())
    except RunCancelled:
        actor.cancel.remote(p.cancel.reason)

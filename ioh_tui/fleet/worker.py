"""The Ray actor that drives one child: the same loop, tools, policy and sandbox, on its node.

What it is given (`ChildSpec`) is the child's `Deps` without the parts that must stay at the
root (store, bus, approver, tree), and its `RunState`; those parts become calls to the root
(`link.py`). It returns how the child ended and its transcript, which the parent reports from.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from ioh_tui.core.transcript import Message
from ioh_tui.engine.bus import EventBus
from ioh_tui.engine.cancel import CancelToken
from ioh_tui.engine.contract import RunResult, TaskContract
from ioh_tui.engine.decide import DecisionRules
from ioh_tui.engine.gatework import GateWork
from ioh_tui.engine.ids import Who
from ioh_tui.engine.instructions import Instructions
from ioh_tui.engine.loop import drive
from ioh_tui.engine.state import Deps, RunState
from ioh_tui.fleet.copies import Patch, changes, unpack
from ioh_tui.fleet.link import Link, RemoteApprover, RemoteStore, RemoteTree
from ioh_tui.fleet.mcp import RootServers, offered, offered_resources
from ioh_tui.hooks import HookSet
from ioh_tui.policy import Approver
from ioh_tui.providers.base import Provider
from ioh_tui.sandbox.base import Sandbox
from ioh_tui.skills import Skills
from ioh_tui.store import AttemptRow, Store
from ioh_tui.toolchain import Toolchain
from ioh_tui.tools import ToolSet, Workspace

if TYPE_CHECKING:
    from ioh_tui.mcp.offers import ResourceInfo, ToolInfo


@dataclass(frozen=True, slots=True)
class ChildSpec:
    """One drive of one child, as it travels to its actor."""

    run_id: int
    epoch: int
    who: Who
    agent_label: str
    depth: int
    provider: Provider
    sandbox: Sandbox
    tools: ToolSet
    workspace: Workspace
    toolchain: Toolchain | None
    project: str | None
    instructions: Instructions | None
    skills: Skills
    hooks: HookSet
    contract: TaskContract
    rules: DecisionRules
    history: list[Message]
    tokens: int
    journal: dict[tuple[int, int], AttemptRow]
    start: int
    recheck: bool
    copy: bytes | None = None
    """The workspace packed (`copies.pack`) when the node does not share it (None: it does)."""
    mcp: tuple[tuple[str, ToolInfo], ...] = ()
    """(server, tool) of the root's running MCP servers: the child calls them through the root."""
    mcp_resources: tuple[ResourceInfo, ...] = ()
    """The resources those servers list: the child reads them through the root."""


@dataclass(frozen=True, slots=True)
class Done:
    """How a child's drive ended, with what its parent reports from, and where it ran."""

    result: RunResult
    history: list[Message]
    tokens: int
    node: str
    patch: Patch | None = None
    """What the child changed in its copy of the workspace (None: it worked in the root's)."""


def spec_for(
    p: Deps, s: RunState, start: int, recheck: bool, epoch: int, copy: bytes | None
) -> ChildSpec:
    """The child's drive as it travels: everything but the root's store, bus, approver, tree."""
    return ChildSpec(
        p.run_id,
        epoch,
        p.who,
        p.agent_label,
        p.depth,
        p.provider,
        p.sandbox,
        p.tools.fixed(),
        p.workspace,
        p.toolchain,
        p.project,
        p.instructions,
        p.skills,
        p.hooks,
        s.contract,
        s.rules,
        list(s.history),
        s.tokens,
        dict(s.journal),
        start,
        recheck,
        copy,
        offered(p),
        offered_resources(p),
    )


class ChildWorker:
    """An actor's body (made a Ray actor in `placement.py`): drives one child at a time."""

    def __init__(self) -> None:
        self._cancel = CancelToken()

    def node(self) -> str:
        """The Ray node this actor runs on."""
        import ray

        return str(ray.get_runtime_context().get_node_id())

    def shares(self, marker: tuple[str, str]) -> bool:
        """Whether the root's marker file is here with its content: the filesystem is shared."""
        path, content = marker
        try:
            return Path(path).read_text(encoding="utf-8") == content
        except OSError:
            return False

    def pid(self) -> int:
        """The worker process's id (the fault tests kill it)."""
        return os.getpid()

    async def drive(self, spec: ChildSpec, hub: Any) -> Done:
        """Drive the child from `spec.start` to its outcome, its parts at the root.

        Given a copy of the workspace, the child works in it (unpacked in a temporary directory
        here) and its changes come back as a patch.
        """
        if spec.copy is None:
            return await self._drive(spec, hub, spec.workspace.root)
        with tempfile.TemporaryDirectory(prefix="ioh-fleet-") as where:
            root = Path(where)
            base = await asyncio.to_thread(unpack, spec.copy, root)
            done = await self._drive(spec, hub, root)
            patch = await asyncio.to_thread(changes, root, base)
        return replace(done, patch=patch)

    async def _drive(self, spec: ChildSpec, hub: Any, root: Path) -> Done:
        link = Link(hub, spec.run_id, spec.epoch)
        if spec.mcp or spec.mcp_resources:
            spec.tools.attach(RootServers(spec.mcp, link.call, spec.mcp_resources))
        p = Deps(
            run_id=spec.run_id,
            who=spec.who,
            provider=spec.provider,
            store=cast(Store, RemoteStore(link)),
            sandbox=spec.sandbox,
            approver=cast(Approver, RemoteApprover(link)),
            tools=spec.tools,
            workspace=Workspace.at(root),
            bus=EventBus([link.emit]),
            cancel=self._cancel,
            spawner=RemoteTree(link),
            agent_label=spec.agent_label,
            depth=spec.depth,
            toolchain=spec.toolchain,
            project=spec.project,
            instructions=spec.instructions,
            skills=spec.skills,
            hooks=spec.hooks,
            gate_work=GateWork(),
        )
        contract = replace(spec.contract, root=root)
        s = RunState(contract, spec.rules, spec.history, spec.tokens, spec.journal)
        try:
            result = await drive(p, s, spec.start, recheck=spec.recheck)
        finally:
            await p.gate_work.close(p.store, p.run_id, p.sandbox.backend)
            await link.close()
        return Done(result, s.history, s.tokens, self.node())

    def cancel(self, reason: str) -> None:
        """Trip the child's token (the root's run was cancelled)."""
        self._cancel.cancel(reason)

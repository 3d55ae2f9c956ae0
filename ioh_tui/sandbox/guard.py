"""A sandbox that applies the run's policy to each command's view (`hidden.Guard`).

The policy's deny rules and the protected files bind the harness's own tools; without this an
approved command could still read a denied file or plant a git hook (issue 18, items 4 and 10).
The guard is computed for each command, from the workspace as it is when the command starts.
Only the mount-namespace rungs can apply it: on the floor and `none` `guarded` changes nothing.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from ioh_tui.sandbox.base import DEFAULT_LIMITS, ExecResult, Limits, OutputSink, Sandbox
from ioh_tui.sandbox.bwrap import BwrapSandbox
from ioh_tui.sandbox.hidden import Guard
from ioh_tui.sandbox.namespaces import NamespacesSandbox

GuardFor = Callable[[Path], Guard]
"""The guard for a command started in the given working directory."""


class GuardedSandbox:
    """`inner`, with the guard `guard_for` gives each command's working directory."""

    def __init__(self, inner: BwrapSandbox | NamespacesSandbox, guard_for: GuardFor) -> None:
        """Wrap `inner` (a mount-namespace rung)."""
        self._inner = inner
        self._guard_for = guard_for

    @property
    def backend(self) -> str:
        """The backend underneath."""
        return self._inner.backend

    @property
    def inner(self) -> BwrapSandbox | NamespacesSandbox:
        """The rung underneath."""
        return self._inner

    @property
    def guard_for(self) -> GuardFor:
        """The guard each command's working directory gets."""
        return self._guard_for

    async def run(
        self,
        argv: Sequence[str],
        cwd: str | os.PathLike[str],
        *,
        limits: Limits = DEFAULT_LIMITS,
        network: bool = False,
        writable: Sequence[str | os.PathLike[str]] = (),
        env: Mapping[str, str] | None = None,
        on_output: OutputSink | None = None,
    ) -> ExecResult:
        """Run `argv` as `Sandbox.run` does, with the policy's guard applied."""
        guard = await asyncio.to_thread(self._guard_for, Path(cwd))  # a walk of the workspace
        return await self._inner.run(
            argv,
            cwd,
            limits=limits,
            network=network,
            writable=writable,
            env=env,
            on_output=on_output,
            guard=guard,
        )


def guarded(sandbox: Sandbox, guard_for: GuardFor) -> Sandbox:
    """`sandbox` applying `guard_for`, where its rung can (bwrap, namespaces); else itself."""
    if isinstance(sandbox, BwrapSandbox | NamespacesSandbox):
        return GuardedSandbox(sandbox, guard_for)
    return sandbox

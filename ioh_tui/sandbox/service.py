"""A long-lived sandboxed process with pipes (an MCP server): started, talked to, torn down.

`Sandbox.run` runs a command to its end. A service is started under the same containment (the
rung's wrapper, its environment and rlimits, the policy's guard) but keeps its stdin and stdout
open for the caller; `Service.stop` ends it and its whole process tree. If the harness dies
without stopping it (SIGKILL), the parent-death signal reaches the wrapper: bubblewrap
(`--die-with-parent`) and `unshare --kill-child` take their PID namespace down, and on the floor
the subreaper passes the signal to the payload (`_reaper.py`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
import uuid
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import ioh_tui.sandbox._reaper as _reaper
from ioh_tui.core.errors import SandboxError
from ioh_tui.sandbox._env import (
    INSIDE_ENV,
    MARKER_KEY,
    protect_harness,
    rlimits_for,
    scrubbed_env,
)
from ioh_tui.sandbox._runner import Launch, check_argv, resolve_dirs, resolve_program
from ioh_tui.sandbox._tree import ProcessTree
from ioh_tui.sandbox.base import Limits, Sandbox
from ioh_tui.sandbox.bwrap import BwrapSandbox, sealed_fds
from ioh_tui.sandbox.floor import REAPED, FloorSandbox, NoneSandbox
from ioh_tui.sandbox.guard import GuardedSandbox
from ioh_tui.sandbox.hidden import Guard
from ioh_tui.sandbox.namespaces import NamespacesSandbox
from ioh_tui.sandbox.user import plan

SERVICE_LIMITS = Limits(output_bytes=None)
"""A server's rlimits: the file size and open files of a command. No CPU or wall clock (it lives
as long as the run) and no address-space cap: servers are often Node programs, and V8 reserves far
more address space than it uses (`Limits.address_space_mb`)."""

STOP_GRACE_S = 2.0
"""How long a server has to exit on its own once its stdin is closed (the MCP shutdown order)."""

LINE_LIMIT = 64 * 1024 * 1024
"""Longest line read from a service's stdout (one JSON-RPC message)."""

_STDERR_LINES = 20


class Service:
    """One started process: its pipes, its tree, and the tail of what it wrote on stderr."""

    def __init__(
        self, process: asyncio.subprocess.Process, tree: ProcessTree, backend: str
    ) -> None:
        self.process = process
        self.backend = backend
        self._tree = tree
        self._stderr: deque[str] = deque(maxlen=_STDERR_LINES)
        self._drain = asyncio.create_task(self._read_stderr())

    @property
    def stdin(self) -> asyncio.StreamWriter:
        """The process's standard input."""
        assert self.process.stdin is not None  # started with a pipe
        return self.process.stdin

    @property
    def stdout(self) -> asyncio.StreamReader:
        """The process's standard output."""
        assert self.process.stdout is not None  # started with a pipe
        return self.process.stdout

    @property
    def returncode(self) -> int | None:
        """The leader's exit status once it ended (None while it runs)."""
        return self.process.returncode

    def stderr_tail(self) -> str:
        """The last lines the process wrote on stderr."""
        return "\n".join(self._stderr)

    def members(self) -> list[int]:
        """Pids of the live processes of its tree (the wrapper included)."""
        return [proc.pid for proc in self._tree.members()]

    async def _read_stderr(self) -> None:
        assert self.process.stderr is not None
        with contextlib.suppress(ValueError, OSError):
            async for raw in self.process.stderr:
                self._stderr.append(raw.decode(errors="replace").rstrip("\n")[:500])

    async def stop(self, grace_s: float = STOP_GRACE_S) -> None:
        """Close stdin, give the process `grace_s` to exit, then kill its whole tree."""
        with contextlib.suppress(OSError, RuntimeError):
            self.stdin.close()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(self.process.wait()), grace_s)
        # Every way out ends with the whole tree dead, whatever the leader did.
        await asyncio.to_thread(self._tree.kill_all)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(self.process.wait()), grace_s)
        self._drain.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._drain

    def kill_now(self) -> None:
        """Kill the whole tree synchronously (the cancellation path)."""
        self._tree.kill_all()


async def start_service(
    sandbox: Sandbox,
    argv: Sequence[str],
    cwd: str | os.PathLike[str],
    *,
    network: bool = False,
    env: Mapping[str, str] | None = None,
    limits: Limits = SERVICE_LIMITS,
) -> Service:
    """Start `argv` in `cwd` under `sandbox`'s containment, with stdin and stdout as pipes.

    Raises:
        SandboxError: the program cannot be found, the wrapper cannot start, or `sandbox` is
            not one of the rungs (only they know how to contain a process that outlives a call).
    """
    check_argv(argv)
    guard: Guard | None = None
    if isinstance(sandbox, GuardedSandbox):
        guard = await asyncio.to_thread(sandbox.guard_for, Path(cwd))  # a walk of the workspace
        sandbox = sandbox.inner
    with _launch(
        sandbox, argv, cwd, network=network, env=env, limits=limits, guard=guard
    ) as launch:
        marker = (MARKER_KEY, uuid.uuid4().hex) if launch.marked else None
        child_env = dict(launch.env)
        if marker is not None:
            child_env[marker[0]] = marker[1]
        try:
            process = await asyncio.create_subprocess_exec(
                *launch.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=launch.cwd,
                env=child_env,
                start_new_session=True,
                preexec_fn=launch.preexec(),
                pass_fds=tuple(launch.pass_fds),
                limit=LINE_LIMIT,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            raise SandboxError(f"cannot start {argv[0]!r}: {exc}") from exc
    tree = ProcessTree(process.pid, marker, wrapped=launch.wrapped, reaper=launch.reaper)
    return Service(process, tree, sandbox.backend)


@contextlib.contextmanager
def _launch(
    sandbox: Sandbox,
    argv: Sequence[str],
    cwd: str | os.PathLike[str],
    *,
    network: bool,
    env: Mapping[str, str] | None,
    limits: Limits,
    guard: Guard | None,
) -> Iterator[Launch]:
    """How `sandbox` would start `argv` (kept open while the process is spawned)."""
    if isinstance(sandbox, BwrapSandbox | NamespacesSandbox):
        root, _ = resolve_dirs(cwd, ())
        inner_env = scrubbed_env(extra=env, network=network, overrides=INSIDE_ENV)
        _found(argv, inner_env, root)
        drop = plan(sandbox.backend, root, ())
        if isinstance(sandbox, NamespacesSandbox):
            wrapper = sandbox.command(
                argv, root, network=network, writable=(), guard=guard, drop=drop
            )
            yield Launch(wrapper, inner_env, root, rlimits_for(limits), wrapped=True, drop=drop)
            return
        opts = sandbox.options(
            root, network=network, writable=(), env=inner_env, guard=guard, drop=drop
        )
        with sealed_fds(opts) as fds:
            wrapper = [sandbox.executable, "--args", str(fds[0]), "--", *argv]
            yield Launch(
                wrapper, inner_env, root, rlimits_for(limits), fds, wrapped=True, drop=drop
            )
        return
    if isinstance(sandbox, FloorSandbox | NoneSandbox):
        root, _ = resolve_dirs(cwd, ())
        protect_harness()
        floor = isinstance(sandbox, FloorSandbox)
        plain_env = scrubbed_env(extra=env, network=network or not floor, inherit_all=not floor)
        _found(argv, plain_env, root)
        rlimits = rlimits_for(limits) if floor else ()
        if not REAPED:
            yield Launch(list(argv), plain_env, root, rlimits, marked=True)
            return
        wrapper = [sys.executable, "-I", "-S", _REAPER, "--", *argv]
        drop = plan(sandbox.backend, root, ()) if floor else None
        yield Launch(wrapper, plain_env, root, rlimits, marked=True, reaper=True, drop=drop)
        return
    raise SandboxError(f"sandbox {sandbox.backend!r} cannot start a long-lived process")


_REAPER = str(Path(_reaper.__file__).resolve())


def _found(argv: Sequence[str], env: Mapping[str, str], cwd: Path) -> None:
    if resolve_program(argv[0], env.get("PATH", ""), cwd) is None:
        raise SandboxError(f"{argv[0]}: command not found")

"""The run's gate work directory, and the trace of every command a gate runs.

One ephemeral directory per drive is the scratch space of gate commands (the `Command` gate's
TMPDIR, the Rust gates' build directories). It is made lazily, at the first evaluation of a
criterion that runs commands: most runs never evaluate one (no gate, a content gate, a run paused
before its first check), and those should neither touch the disk nor carry creation and teardown
rows that describe nothing. `api._driven` (a root) and `Tree._work` (a child) remove it in their
`finally`, so every exit path of the drive (success, a stop, cancellation, an exception, the task
being cancelled) deletes it.

The trace (`sandbox_events`) gets `workdir_created` (detail: the path), one `gate_exec` row per
command a gate ran (detail: the argv; the agent's own commands are `exec` rows of the same shape),
`cap_hit` after a command a cap killed, and `workdir_removed` (or `workdir_remove_failed`). A
directory a killed drive left is removed by the next drive of the run (`remove_left`).
"""

from __future__ import annotations

import asyncio
import logging
import os
import shlex
import tempfile
from collections.abc import Mapping, Sequence
from contextlib import AsyncExitStack
from pathlib import Path

from ioh_tui.sandbox.base import DEFAULT_LIMITS, ExecResult, Limits, OutputSink, Sandbox
from ioh_tui.sandbox.workdir import remove_tree, workdir
from ioh_tui.store import Store

log = logging.getLogger(__name__)

_PREFIX = "ioh-gate-"


async def trace_command(
    store: Store,
    run_id: int,
    step: int,
    backend: str,
    argv: object,
    cap_hit: object,
    *,
    kind: str = "exec",
) -> None:
    """The rows of one sandboxed command: what ran, under which backend, and any cap it hit."""
    line = shlex.join(str(a) for a in argv) if isinstance(argv, list | tuple) else str(argv)
    await store.add_sandbox_event(run_id, step, kind, backend, line)
    if cap_hit:
        await store.add_sandbox_event(run_id, step, "cap_hit", backend, str(cap_hit))


class GateWork:
    """The drive's gate work directory: made on first use, removed by `close`."""

    def __init__(self) -> None:
        self._stack: AsyncExitStack | None = None
        self.path: Path | None = None
        """The directory while it exists."""

    async def open(self, store: Store, run_id: int, backend: str, step: int) -> Path:
        """The directory, made (and recorded) the first time it is asked for."""
        if self.path is None:
            self._stack = AsyncExitStack()
            self.path = await self._stack.enter_async_context(workdir(_PREFIX))
            await store.add_sandbox_event(run_id, step, "workdir_created", backend, str(self.path))
        return self.path

    async def close(self, store: Store, run_id: int, backend: str) -> None:
        """Remove the directory if it was made, then record the teardown.

        Never raises `Exception`: it runs in a `finally`, where an error would replace the one
        that ended the drive. The removal itself comes first and cannot be skipped by a failed
        trace write.
        """
        made, path = self._stack, self.path
        if made is None or path is None:
            return
        self._stack, self.path = None, None
        kind = "workdir_removed"
        detail = str(path)
        try:
            await made.aclose()
        except OSError as exc:
            log.warning("could not remove the gate work directory %s: %s", path, exc)
            kind, detail = "workdir_remove_failed", f"{path}: {exc}"
        try:
            step = await store.last_step(run_id)
            await store.add_sandbox_event(run_id, step, kind, backend, detail)
        except Exception:
            log.exception("could not record the removal of %s", path)


async def remove_left(store: Store, run_id: int, backend: str) -> None:
    """Remove the gate work directories an earlier drive of the run made and never removed.

    A drive killed outright (SIGKILL, power loss) never reaches its `finally`; its directory is
    in the trace (`workdir_created` without `workdir_removed`), and the next drive, which holds
    the run's lease, removes it. Only a directory this module could have made is touched: an
    `ioh-gate-` directory directly in the temporary directory (the trace is not trusted to name
    any other path), never through a symlink.
    """
    left: dict[str, None] = {}
    for row in await store.sandbox_events(run_id):
        if row.kind == "workdir_created":
            left[row.detail] = None
        elif row.kind == "workdir_removed":
            left.pop(row.detail, None)
    if not left:
        return
    step = await store.last_step(run_id)
    for detail in await asyncio.to_thread(_remove_ours, list(left)):
        await store.add_sandbox_event(run_id, step, "workdir_removed", backend, detail)


def _remove_ours(left: list[str]) -> list[str]:
    """Remove those of `left` that are gate directories; the ones now gone."""
    scratch = Path(tempfile.gettempdir()).resolve()
    gone = []
    for detail in left:
        path = Path(detail)
        if path.parent != scratch or not path.name.startswith(_PREFIX) or path.is_symlink():
            continue
        try:
            if path.is_dir():
                remove_tree(path)
        except OSError as exc:
            log.warning("could not remove the gate work directory %s: %s", path, exc)
            continue
        gone.append(detail)
    return gone


class TracedSandbox:
    """The drive's sandbox as a gate sees it: every command it runs is added to the trace."""

    def __init__(self, sandbox: Sandbox, store: Store, run_id: int, step: int) -> None:
        self._sandbox = sandbox
        self._store = store
        self._run_id = run_id
        self._step = step

    @property
    def backend(self) -> str:
        """The backend of the sandbox underneath."""
        return self._sandbox.backend

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
        """Run through the drive's sandbox, then record the command (as agent commands are)."""
        result = await self._sandbox.run(
            argv,
            cwd,
            limits=limits,
            network=network,
            writable=writable,
            env=env,
            on_output=on_output,
        )
        await trace_command(
            self._store,
            self._run_id,
            self._step,
            result.backend,
            list(result.argv),
            result.cap_hit,
            kind="gate_exec",
        )
        return result


def traced(sandbox: Sandbox, store: Store, run_id: int, step: int) -> Sandbox:
    """The sandbox a gate evaluated after `step` runs its commands in."""
    return TracedSandbox(sandbox, store, run_id, step)

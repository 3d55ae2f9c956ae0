"""The shared capped runner: spawn, stream output, enforce caps, tear the whole tree down, classify.

Every backend builds a `Launch` (its wrapper argv, environment, rlimits) and hands it here, so the
caps and the teardown guarantees are identical on every rung.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import shutil
import signal
import subprocess
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ioh_tui.core.errors import ConfigError, SandboxError
from ioh_tui.sandbox._capture import Capture
from ioh_tui.sandbox._env import MARKER_KEY, Rlimit, child_setup
from ioh_tui.sandbox._tree import ProcessTree
from ioh_tui.sandbox.base import CapHit, ExecResult, Limits, OutputSink
from ioh_tui.sandbox.user import Drop

POLL_S = 0.04
"""Monitor period: the original's 40 ms. A memory bomb can outgrow the cap by what it allocates in
one period; RLIMIT_AS is the backstop for that overshoot."""

QUIET_POLL_S = 0.32
"""The longest period, reached by doubling while the tree is quiet (no CPU used, no process
started or ended, no memory grown since the last sample): a sleeping command is sampled about
three times a second instead of 25. Any change goes back to `POLL_S`. What a quiet command can
do before the next sample is bounded as before by its rlimits (RLIMIT_AS, RLIMIT_CPU); a fork
burst after a quiet spell is seen at most this much later."""

_QUIET_CPU_S = 0.002
"""CPU seconds between two samples below which the tree counts as quiet (a tick is 1-10 ms)."""

_DRAIN_S = 0.5
"""How long to keep reading after the tree is dead. Pipes close when the last holder dies, so this
only matters if something we could not see still holds one; we never wait longer for it."""


_log = logging.getLogger(__name__)

_MEMORY_ERROR = re.compile(
    rb"MemoryError|Cannot allocate memory|std::bad_alloc|out of memory|"
    rb"memory allocation of \d+ bytes failed|failed to allocate",
    re.IGNORECASE,
)
"""How runtimes report a failed allocation (RLIMIT_AS makes malloc/mmap fail with ENOMEM)."""


@dataclass(frozen=True, slots=True)
class Launch:
    """How a backend starts one command."""

    argv: Sequence[str]
    """Everything that is executed: the backend's wrapper (if any) followed by the payload."""
    env: dict[str, str]
    cwd: Path
    rlimits: Sequence[Rlimit] = ()
    pass_fds: Sequence[int] = ()
    marked: bool = False
    """Put a per-run token in the environment so teardown can find escapees (no PID namespace)."""
    wrapped: bool = False
    """A wrapper reports the payload's signal death as exit status 128 + signal."""
    reaper: bool = False
    """The leader is the floor's subreaper (`_reaper.py`): orphans stay its descendants, it is
    not the command's (no memory, no process count) and it is killed last."""
    drop: Drop | None = None
    """As root: the command's user, reached in the child before the exec (`user.py`)."""

    def preexec(self) -> Callable[[], None]:
        """The child's set-up: rlimits, the parent-death signal and, as root, the drop."""
        return child_setup(list(self.rlimits), self.drop.preexec() if self.drop else None)


async def run_capped(
    launch: Launch,
    *,
    argv: Sequence[str],
    limits: Limits,
    backend: str,
    on_output: OutputSink | None,
) -> ExecResult:
    """Run `launch` under `limits` and return how it ended; nothing of its tree survives.

    Args:
        launch: what to execute.
        argv: the payload as the caller gave it (reported back in the result).
        limits: caps that kill.
        backend: the backend name reported in the result.
        on_output: live tail of decoded output.

    Returns:
        The result. A cap hit always has `exit_code` None.

    Raises:
        SandboxError: the wrapper could not be started (never used for the payload's own failure).
    """
    started = time.monotonic()
    env = dict(launch.env)
    marker = (MARKER_KEY, uuid.uuid4().hex) if launch.marked else None
    if marker is not None:
        env[marker[0]] = marker[1]
    capture = Capture(limits.output_bytes, on_output)
    loop = asyncio.get_running_loop()
    try:
        transport, _ = await loop.subprocess_exec(
            lambda: capture,
            *launch.argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=launch.cwd,
            env=env,
            start_new_session=True,
            preexec_fn=launch.preexec(),
            pass_fds=tuple(launch.pass_fds),
        )
    except (FileNotFoundError, PermissionError, NotADirectoryError) as exc:
        if launch.wrapped:
            raise SandboxError(f"{backend}: cannot start {launch.argv[0]}: {exc}") from exc
        return unavailable(argv, backend, f"{argv[0]}: {exc.strerror or exc}")
    except (OSError, subprocess.SubprocessError) as exc:
        raise SandboxError(f"{backend}: cannot start {argv[0]!r}: {exc}") from exc

    tree = ProcessTree(transport.get_pid(), marker, wrapped=launch.wrapped, reaper=launch.reaper)
    try:
        cap = await _supervise(tree, capture, limits)
    except BaseException:
        # Cancellation, or an error on our side: kill synchronously, right now, so the tree is
        # gone even if the loop never runs another callback for us; then give the leader a moment
        # to be reaped so the transport closes cleanly.
        tree.kill_all()
        with contextlib.suppress(asyncio.CancelledError, TimeoutError):
            await asyncio.wait_for(capture.exited.wait(), _DRAIN_S)
        raise
    finally:
        transport.close()
    return _result(
        argv=argv,
        backend=backend,
        returncode=transport.get_returncode(),
        cap=cap,
        tree=tree,
        capture=capture,
        limits=limits,
        wrapped=launch.wrapped,
        duration_ms=(time.monotonic() - started) * 1000.0,
    )


async def _supervise(tree: ProcessTree, capture: Capture, limits: Limits) -> CapHit | None:
    """Wait for the leader, a cap or the wall clock; then kill the tree and drain the pipes."""
    state: dict[str, CapHit] = {}
    monitor = asyncio.create_task(_watch(tree, limits, capture.tripped, state))
    exited = asyncio.create_task(capture.exited.wait())
    tripped = asyncio.create_task(capture.tripped.wait())
    helpers = [monitor, exited, tripped]
    try:
        done, _ = await asyncio.wait(
            {exited, tripped}, timeout=limits.wall_s, return_when=asyncio.FIRST_COMPLETED
        )
        cap: CapHit | None = capture.cap_hit or state.get("cap")
        if not done:
            cap = "wall"
        monitor.cancel()
        # Every exit path, including a normal one, ends with the whole tree dead: a daemon the
        # command left behind is as much an escape as one that outlived a cap.
        await asyncio.to_thread(tree.kill_all)
        await capture.exited.wait()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(capture.drained.wait(), _DRAIN_S)
        return cap
    finally:
        for task in helpers:
            task.cancel()
        await asyncio.gather(*helpers, return_exceptions=True)


async def _watch(
    tree: ProcessTree, limits: Limits, tripped: asyncio.Event, state: dict[str, CapHit]
) -> None:
    """Sample the tree every POLL_S (backing off while it is quiet); trip a cap when passed."""
    memory = limits.memory_mb * 1024 * 1024 if limits.memory_mb is not None else None
    period = POLL_S
    last: tuple[int, float, int] | None = None
    while True:
        try:
            rss, cpu, count = await asyncio.to_thread(tree.measure)
        except Exception:
            # Keep enforcing: one failed sample must not switch the caps off for this command.
            _log.exception("process tree sample failed")
            period = POLL_S
            await asyncio.sleep(period)
            continue
        if memory is not None and rss > memory:
            state["cap"] = "memory"
        elif limits.cpu_s is not None and cpu > limits.cpu_s:
            state["cap"] = "cpu"
        elif limits.max_processes is not None and count > limits.max_processes:
            state["cap"] = "processes"
        if "cap" in state:
            tripped.set()
            return
        quiet = (
            last is not None
            and count == last[2]
            and rss <= last[0]
            and cpu - last[1] < _QUIET_CPU_S
        )
        period = min(period * 2, QUIET_POLL_S) if quiet else POLL_S
        last = (rss, cpu, count)
        await asyncio.sleep(period)


def _decode_status(returncode: int | None, wrapped: bool) -> tuple[int | None, int | None]:
    """(exit_code, signal) from a wait status; wrappers encode a signal death as 128 + signal."""
    if returncode is None:
        return None, None
    if returncode < 0:
        return None, -returncode
    if wrapped and 128 < returncode < 128 + 65:
        return None, returncode - 128
    return returncode, None


def _classify(
    sig: int | None, exit_code: int | None, tree: ProcessTree, limits: Limits, stderr: bytes
) -> CapHit | None:
    """Attribute a death the supervisor did not cause itself to the rlimit behind it."""
    if limits.cpu_s is not None and (
        sig == signal.SIGXCPU or (sig == signal.SIGKILL and tree.cpu_s >= limits.cpu_s - 0.3)
    ):
        return "cpu"
    if limits.memory_mb is not None and (sig is not None or exit_code not in (None, 0)):
        near_cap = tree.peak_rss >= 0.9 * limits.memory_mb * 1024 * 1024
        if near_cap or _MEMORY_ERROR.search(stderr[-8192:]):
            return "memory"
    return None


def _result(
    *,
    argv: Sequence[str],
    backend: str,
    returncode: int | None,
    cap: CapHit | None,
    tree: ProcessTree,
    capture: Capture,
    limits: Limits,
    wrapped: bool,
    duration_ms: float,
) -> ExecResult:
    exit_code, sig = _decode_status(returncode, wrapped)
    if cap is None:
        cap = _classify(sig, exit_code, tree, limits, capture.raw(2))
    return ExecResult(
        argv=tuple(argv),
        # A cap hit never reports an exit code, so no `expect_exit` can accept a capped run.
        exit_code=None if cap is not None else exit_code,
        signal=sig,
        stdout=capture.text(1),
        stderr=capture.text(2),
        cap_hit=cap,
        backend=backend,
        duration_ms=duration_ms,
    )


def unavailable(argv: Sequence[str], backend: str, why: str) -> ExecResult:
    """The result for a program that could not be found or executed (nothing ran)."""
    return ExecResult(
        argv=tuple(argv),
        exit_code=None,
        signal=None,
        stdout="",
        stderr=f"{why}\n",
        cap_hit=None,
        backend=backend,
        unavailable=True,
    )


def check_argv(argv: Sequence[str]) -> None:
    """Reject an argv no backend can run.

    Raises:
        ConfigError: `argv` is empty or a plain string (which would be split into characters).
    """
    if isinstance(argv, str) or not argv or not all(isinstance(a, str) for a in argv):
        raise ConfigError("argv must be a non-empty list of strings (no shell is involved)")


def resolve_program(program: str, path: str, cwd: Path) -> str | None:
    """Where `program` would be executed from, or None when it cannot be found or executed.

    Wrapped backends resolve before spawning, so that a missing program is reported as
    unavailable instead of as the wrapper's own failure.
    """
    if "/" in program:
        candidate = cwd / program
        return str(candidate) if os.access(candidate, os.X_OK) and candidate.is_file() else None
    return shutil.which(program, path=path)


def resolve_dirs(
    cwd: str | os.PathLike[str], writable: Sequence[str | os.PathLike[str]]
) -> tuple[Path, list[Path]]:
    """Absolute, symlink-free working directory and writable roots for a bind-mounting backend.

    Writable roots that do not exist are dropped: a missing bind source would fail the whole
    command, and a toolchain cache that does not exist yet needs no access (as in the original).

    Raises:
        SandboxError: the working directory does not exist.
    """
    real = Path(cwd).resolve()
    if not real.is_dir():
        raise SandboxError(f"working directory {cwd} does not exist")
    roots = [Path(p) for p in writable]
    return real, [p.resolve() for p in roots if p.is_dir()]

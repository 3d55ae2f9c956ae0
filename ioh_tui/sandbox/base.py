"""The one sandbox interface: every command the agent or a gate runs goes through `Sandbox.run`."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

CapHit = Literal["cpu", "wall", "memory", "output", "processes"]


@dataclass(frozen=True, slots=True)
class Limits:
    """Caps that kill (never throttle). None means no cap for that resource."""

    cpu_s: float | None = None
    wall_s: float | None = None
    memory_mb: int | None = None
    output_bytes: int | None = 4_000_000
    """Combined stdout+stderr bytes kept; past it the command is killed (`cap_hit="output"`)."""
    file_size_mb: int | None = 1024
    open_files: int | None = 1024
    address_space_mb: int | None = None
    """RLIMIT_AS backstop behind the RSS monitor. None derives it from `memory_mb`
    (2 x memory + 256 MB, because runtimes reserve far more address space than they touch);
    0 disables it (for runtimes such as V8 that reserve huge address ranges up front)."""
    max_processes: int | None = None
    """Live processes in the command's tree (wrappers not counted); past it the whole tree is
    killed (`cap_hit="processes"`). Enforced by the monitor on every rung, not by RLIMIT_NPROC,
    which counts every process of the user (or none, for root) rather than this command's."""


DEFAULT_LIMITS = Limits()
"""No CPU, wall or memory cap; only the output, file-size and open-file defaults."""

QUIET_ENV = {"PYTHONDONTWRITEBYTECODE": "1"}
"""Python's bytecode cache keys on mtime in whole seconds and size: an edit within the same second
that keeps the size (`a - b` to `a + b`) would run the stale cached module. Never write one."""


GATE_LIMITS = Limits(cpu_s=60, wall_s=120, memory_mb=2048)
"""The verification gate's caps (the original's `SandboxLimits::default()`)."""

EXEC_LIMITS = Limits(cpu_s=600, memory_mb=2048, max_processes=512)
"""The caps on every command the agent runs (`exec`); its wall clock is the tool's timeout.

The adversary's 2 GiB allocation, CPU spin and 1,023-process tree each ran to completion under the
wall clock alone (issue 18, item 5). Memory is the gate's; CPU allows a long multi-core build
(600 CPU-seconds, under the 900 s wall clock); 512 processes is far above a parallel build or test
run and far below a fork bomb."""


@dataclass(frozen=True, slots=True)
class ExecResult:
    """How a command ended."""

    argv: tuple[str, ...]
    exit_code: int | None
    """None when the command was killed (by a cap or a signal)."""
    signal: int | None
    stdout: str
    stderr: str
    cap_hit: CapHit | None
    backend: str
    duration_ms: float = 0.0
    unavailable: bool = False
    """The program was not found (nothing ran)."""

    @property
    def ok(self) -> bool:
        """Exited 0 with no cap hit."""
        return self.cap_hit is None and self.exit_code == 0


OutputSink = Callable[[str], None]


class Sandbox(Protocol):
    """Runs one argv (no shell) under a containment backend."""

    @property
    def backend(self) -> str:
        """In force: `linux-bubblewrap`, `linux-namespaces`, `portable-floor` or `none`."""
        ...

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
        """Run `argv` in `cwd` and return how it ended; the whole process tree is gone on return.

        Args:
            argv: program and arguments; never interpreted by a shell.
            cwd: working directory; writable (with `writable` and a private temp dir).
            limits: caps that kill.
            network: allow network access (denied by default).
            writable: extra writable directories (toolchain caches).
            env: extra environment variables on top of the scrubbed base environment.
            on_output: called with decoded chunks of output as they arrive (for a live tail).
        """
        ...

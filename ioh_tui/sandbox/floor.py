"""The portable floor (rlimits, clean environment, caps, tree kill) and the uncontained `none`."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import ioh_tui.sandbox._reaper as _reaper
from ioh_tui.sandbox._env import can_protect_harness, protect_harness, rlimits_for, scrubbed_env
from ioh_tui.sandbox._runner import (
    Launch,
    check_argv,
    resolve_dirs,
    resolve_program,
    run_capped,
    unavailable,
)
from ioh_tui.sandbox.base import DEFAULT_LIMITS, ExecResult, Limits, OutputSink
from ioh_tui.sandbox.user import (
    ROOT_USER_ENV,
    SETUP_FAILED,
    SETUP_LINE,
    Drop,
    plan,
    refused,
    setting,
    setup_error,
)

_REAPER = str(Path(_reaper.__file__).resolve())
_EXEC_FAILED = "ioh-sandbox: exec "
REAPED = sys.platform.startswith("linux")
"""Whether commands run under the subreaper (`_reaper.py`); it needs Linux's prctl."""


def key_exposure(backend: str) -> str | None:
    """What a command on this rung can still read of the harness's keys or root's files, or None.

    On the floor and `none` a command runs as the harness's user. The harness hides its
    environment and memory from such a command by being non-dumpable, which holds only for an
    unprivileged user on Linux (docs/security.md). As root, the floor, bwrap and namespaces run
    commands as an unprivileged user (`user.py`) unless `root_user = root` or the rung cannot
    here; then this says that commands keep uid 0.
    """
    root = os.geteuid() == 0
    if root and backend != "none":
        kept = _keeps_root(backend)
        if kept is not None:
            return f"the harness runs as root and {kept}: {_ROOT_READS[backend]}"
        if backend != "portable-floor":
            return None
    if backend not in ("portable-floor", "none"):
        return None
    if root and backend == "none":
        why = "the harness runs as root"
    elif not root and not can_protect_harness():
        why = "this platform cannot hide the harness's process"
    else:
        return None
    return (
        f"{why}: on --sandbox {'none' if backend == 'none' else 'floor'} commands can read "
        "its environment and memory (API keys); use bwrap or namespaces, or run as an ordinary "
        "user"
    )


_ROOT_READS = {
    "linux-bubblewrap": "commands on --sandbox bwrap run as uid 0 and can read root-only files "
    "(/etc/shadow)",
    "linux-namespaces": "commands on --sandbox namespaces run as uid 0 and can read root-only "
    "files (/etc/shadow)",
    "portable-floor": "commands on --sandbox floor run as uid 0: they can read and write every "
    "root-only file and read the harness's environment and memory (API keys)",
}


def _keeps_root(backend: str) -> str | None:
    """Why commands of `backend` keep uid 0 under a root harness, or None when they drop."""
    if not REAPED:
        return "this platform cannot start commands as another user"
    if setting() == "root":
        return f"{ROOT_USER_ENV}=root"
    why = refused(backend)
    return f"it cannot start commands as an unprivileged user here ({why})" if why else None


async def run_reaped(
    argv: Sequence[str],
    env: dict[str, str],
    cwd: Path,
    limits: Limits,
    backend: str,
    on_output: OutputSink | None,
    *,
    rlimited: bool,
    drop: Drop | None = None,
) -> ExecResult:
    """Run `argv` directly, under the subreaper where there is one, and report how it ended.

    The subreaper keeps a daemon that leaves the tree and clears its environment inside the tree
    teardown walks (issue 18, item 13); it costs one interpreter start (`python -I -S`). With
    `drop` (the harness is root, `user.py`) the subreaper starts as the command's unprivileged
    user.
    """
    if not REAPED:
        launch = Launch(
            argv=list(argv),
            env=env,
            cwd=cwd,
            rlimits=rlimits_for(limits) if rlimited else (),
            marked=True,
        )
        return await run_capped(
            launch, argv=argv, limits=limits, backend=backend, on_output=on_output
        )
    if resolve_program(argv[0], env.get("PATH", ""), cwd) is None:
        return unavailable(argv, backend, f"{argv[0]}: command not found")
    launch = Launch(
        argv=[sys.executable, "-I", "-S", _REAPER, "--", *argv],
        env=env,
        cwd=cwd,
        rlimits=rlimits_for(limits) if rlimited else (),
        marked=True,
        reaper=True,
        drop=drop,
    )
    result = await run_capped(
        launch, argv=argv, limits=limits, backend=backend, on_output=on_output
    )
    first = result.stderr.partition("\n")[0]
    if result.exit_code == _reaper.EXEC_FAILED and first.startswith(_EXEC_FAILED):
        return unavailable(argv, backend, first)
    if result.exit_code == SETUP_FAILED and first.startswith(SETUP_LINE):
        raise setup_error(backend, first)
    return result


class FloorSandbox:
    """Always available: a new session, rlimits, a scrubbed environment and supervisor caps.

    Confines neither writes nor the network (proxy variables are removed, which only stops
    programs that honour them). See docs/sandbox.md.
    """

    @property
    def backend(self) -> str:
        """Always `portable-floor`."""
        return "portable-floor"

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
        """Run `argv` in `cwd` under rlimits and supervisor caps (see `Sandbox.run`).

        `writable` is accepted for interface parity; the floor cannot confine writes, so every
        directory the user can write stays writable (as root, with the command's user: these
        roots too, `user.py`).

        Raises:
            SandboxError: as root, the command could not be started as its unprivileged user.
        """
        check_argv(argv)
        cwd, roots = resolve_dirs(cwd, writable)
        protect_harness()  # the command sees the harness's /proc entry (docs/security.md)
        env = scrubbed_env(extra=env, network=network)
        drop = plan(self.backend, cwd, roots) if REAPED else None
        return await run_reaped(
            argv, env, cwd, limits, self.backend, on_output, rlimited=True, drop=drop
        )


class NoneSandbox:
    """No containment at all (the parent's environment, no rlimits), reported as backend `none`.

    The supervisor still applies the wall clock, the output cap, the RSS and CPU monitor and the
    tree kill, because those protect the harness rather than the host.
    """

    @property
    def backend(self) -> str:
        """Always `none`."""
        return "none"

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
        """Run `argv` in `cwd` with the parent's privileges (see `Sandbox.run`)."""
        check_argv(argv)
        cwd, _ = resolve_dirs(cwd, ())
        protect_harness()
        env = scrubbed_env(extra=env, network=True, inherit_all=True)
        return await run_reaped(argv, env, cwd, limits, self.backend, on_output, rlimited=False)

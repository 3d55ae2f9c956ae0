"""The bubblewrap backend: all namespaces unshared, read-only system, seccomp, no capabilities."""

from __future__ import annotations

import contextlib
import os
import subprocess
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from ioh_tui.sandbox._env import INSIDE_ENV, kept_under_tmp, rlimits_for, scrubbed_env
from ioh_tui.sandbox._masks import secret_paths
from ioh_tui.sandbox._runner import (
    Launch,
    check_argv,
    resolve_dirs,
    resolve_program,
    run_capped,
    unavailable,
)
from ioh_tui.sandbox._seccomp import deny_list_program
from ioh_tui.sandbox._sockets import bound_sockets, runtime_dirs
from ioh_tui.sandbox.base import DEFAULT_LIMITS, ExecResult, Limits, OutputSink
from ioh_tui.sandbox.hidden import Guard, harness_paths
from ioh_tui.sandbox.user import SETUP_FAILED, SETUP_LINE, Drop, plan, setup_error

_EXEC_FAILED = "bwrap: execvp "
"""bubblewrap's message when the payload cannot be executed inside (it then exits 1)."""


class BwrapSandbox:
    """bubblewrap (`linux-bubblewrap`): user, pid, net, ipc, uts, mount and cgroup namespaces.

    Inside: `/` bound read-only, a fresh /proc and /dev, a private tmpfs on /tmp, the working
    directory and `writable` bound read-write, no capabilities, a new session, the seccomp
    deny-list, and a scrubbed environment. Killing bwrap (or the harness dying) kills the PID
    namespace, so nothing started inside can outlive the command.
    """

    def __init__(self, bwrap: str = "bwrap") -> None:
        """Use the bubblewrap executable `bwrap` (a path or a name on PATH)."""
        self._bwrap = bwrap

    @property
    def backend(self) -> str:
        """Always `linux-bubblewrap`."""
        return "linux-bubblewrap"

    @property
    def executable(self) -> str:
        """The bubblewrap executable this backend starts."""
        return self._bwrap

    def options(
        self,
        cwd: Path,
        *,
        network: bool,
        writable: Sequence[Path],
        env: Mapping[str, str],
        guard: Guard | None = None,
        drop: Drop | None = None,
    ) -> list[str]:
        """The bubblewrap options (everything before `--`) for one command.

        With `drop` (the harness is root, `user.py`) bubblewrap starts as the command's
        unprivileged user, which can mount nothing where it cannot reach: such masks are left
        out, as the command cannot reach what they would cover either.
        """
        seen = drop.keep if drop else list
        opts = ["--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL"]
        if network:
            opts.append("--share-net")
        opts += ["--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
        for kept in seen(kept_under_tmp(env.get("PATH", ""))):
            opts += ["--ro-bind", kept, kept]
        # Binds come after the tmpfs so a workspace under /tmp is bound on top of it, not hidden.
        for path in _bind_order(cwd, writable):
            opts += ["--bind", str(path), str(path)]
        # The policy's guard on the writable tree, before any mask (a pin rebinds a directory,
        # which would drop a mask made inside it earlier).
        for pinned in seen(guard.pinned if guard else ()):
            opts += ["--bind", pinned, pinned]
        for protected in seen(guard.readonly if guard else ()):
            opts += ["--ro-bind", protected, protected]
        keep = [cwd, *writable]
        # Host unix sockets: a read-only bind does not stop connect() (see _sockets).
        runtime = [] if network else runtime_dirs(keep)
        for hidden in seen(runtime):
            opts += ["--tmpfs", hidden, "--remount-ro", hidden]
        for sock in seen(bound_sockets(runtime, keep)):
            opts += ["--ro-bind", "/dev/null", sock]
        dirs, files = secret_paths(keep)
        # The harness's own files: the data directory and the open stores (hidden.py).
        own_dirs, own_files = harness_paths(keep)
        dirs = [*dirs, *own_dirs]
        files = [*files, *own_files, *(guard.masked if guard else ())]
        for secret in seen(dirs):
            opts += ["--tmpfs", secret, "--remount-ro", secret]
        for secret in seen(files):
            opts += ["--ro-bind", "/dev/null", secret]
        opts += ["--chdir", str(cwd), "--clearenv"]
        for key, value in env.items():
            opts += ["--setenv", key, value]
        return opts

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
        guard: Guard | None = None,
    ) -> ExecResult:
        """Run `argv` in `cwd` inside bubblewrap (see `Sandbox.run`; `guard`: `hidden.Guard`)."""
        check_argv(argv)
        cwd, roots = resolve_dirs(cwd, writable)
        inner_env = scrubbed_env(extra=env, network=network, overrides=INSIDE_ENV)
        if resolve_program(argv[0], inner_env["PATH"], cwd) is None:
            return unavailable(argv, self.backend, f"{argv[0]}: command not found")
        drop = plan(self.backend, cwd, roots)
        opts = self.options(
            cwd, network=network, writable=roots, env=inner_env, guard=guard, drop=drop
        )
        with sealed_fds(opts) as fds:
            launch = Launch(
                argv=[self._bwrap, "--args", str(fds[0]), "--", *argv],
                # bwrap itself never sees the parent's environment either.
                env=inner_env,
                cwd=cwd,
                rlimits=rlimits_for(limits),
                pass_fds=fds,
                wrapped=True,
                drop=drop,
            )
            result = await run_capped(
                launch, argv=argv, limits=limits, backend=self.backend, on_output=on_output
            )
        if result.exit_code == 1 and result.stderr.startswith(_EXEC_FAILED):
            return unavailable(argv, self.backend, result.stderr.strip())
        if result.exit_code == SETUP_FAILED and result.stderr.startswith(SETUP_LINE):
            raise setup_error(self.backend, result.stderr)
        return result

    def self_test(self, *, dropped: bool = False) -> str | None:
        """Start `true` with the real options once; None when that works, else why not.

        `dropped`: as the harness's commands would start as root (`user.py`), through the stage
        and as the unprivileged user.
        """
        with tempfile.TemporaryDirectory(prefix="ioh-probe-") as tmp:
            cwd = Path(tmp).resolve()
            env = scrubbed_env(extra=None, network=False, overrides=INSIDE_ENV)
            drop = plan(self.backend, cwd, ()) if dropped else None
            opts = self.options(cwd, network=False, writable=(), env=env, drop=drop)
            try:
                with sealed_fds(opts) as fds:
                    done = subprocess.run(
                        [self._bwrap, "--args", str(fds[0]), "--", "true"],
                        preexec_fn=drop.preexec() if drop else None,
                        cwd=cwd,
                        env=env,
                        pass_fds=fds,
                        capture_output=True,
                        timeout=10,
                        check=False,
                    )
            except (OSError, subprocess.SubprocessError) as exc:
                return f"bubblewrap ({self._bwrap}) could not be started: {exc}"
        if done.returncode != 0:
            why = done.stderr.decode(errors="replace").strip().splitlines()
            return f"bubblewrap refused ({why[-1] if why else f'exit {done.returncode}'})"
        return None


def _bind_order(cwd: Path, writable: Sequence[Path]) -> list[Path]:
    """Unique paths, parents before children, so a nested bind is not hidden by its parent's."""
    unique = dict.fromkeys([cwd, *writable])
    return sorted(unique, key=lambda p: len(p.parts))


@contextlib.contextmanager
def sealed_fds(opts: Sequence[str]) -> Iterator[tuple[int, ...]]:
    """Memory files holding the options (first fd) and the seccomp program (second, if any).

    Options go through `--args FD` rather than the command line, because /proc/PID/cmdline is
    readable by every local user and the options carry the environment values.
    """
    fds: list[int] = []
    try:
        program = deny_list_program()
        extra: list[str] = []
        if program is not None:
            fds.append(_memfd("ioh-bwrap-seccomp", program))
            extra = ["--seccomp", str(fds[0])]
        args = "".join(f"{o}\0" for o in [*opts, *extra]).encode()
        fds.insert(0, _memfd("ioh-bwrap-args", args))
        yield tuple(fds)
    finally:
        for fd in fds:
            os.close(fd)


def _memfd(name: str, data: bytes) -> int:
    fd = os.memfd_create(name, os.MFD_CLOEXEC)
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
    os.lseek(fd, 0, os.SEEK_SET)
    return fd

"""The namespaces backend: util-linux `unshare` plus a small in-namespace launcher."""

from __future__ import annotations

import marshal
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

import ioh_tui.sandbox._ns_launcher as _ns_launcher
from ioh_tui.core.errors import SandboxError
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

_LAUNCHER = Path(_ns_launcher.__file__).resolve()
_EXEC_FAILED = "ioh-sandbox: exec "
_SETUP_FAILED = "ioh-sandbox: "


def unshare_argv(unshare: str, *, network: bool) -> list[str]:
    """The `unshare` invocation: user (mapped to root), mount, PID, IPC, UTS and network namespaces.

    `--fork --kill-child` makes the launcher PID 1 of the new PID namespace and gives it SIGKILL
    when `unshare` dies, which in turn kills every process in the namespace.
    """
    argv = [unshare, "--user", "--map-root-user", "--mount", "--propagation", "private"]
    argv += ["--pid", "--fork", "--kill-child", "--mount-proc", "--ipc", "--uts"]
    if not network:
        argv.append("--net")
    return argv


class NamespacesSandbox:
    """Namespaces without bubblewrap (`linux-namespaces`).

    Same view as the bubblewrap backend: everything read-only, private /tmp and /dev/shm, the
    working directory and `writable` read-write, no capabilities, the seccomp deny-list, no network
    unless allowed. Costs one extra interpreter start (the launcher) per command.
    """

    def __init__(self, unshare: str | None = None, python: str | None = None) -> None:
        """Use `unshare` and `python` (defaults: `unshare` on PATH, this interpreter)."""
        self._unshare = unshare or shutil.which("unshare") or "unshare"
        self._python = python or sys.executable

    @property
    def backend(self) -> str:
        """Always `linux-namespaces`."""
        return "linux-namespaces"

    def command(
        self,
        argv: Sequence[str],
        cwd: Path,
        *,
        network: bool,
        writable: Sequence[Path],
        guard: Guard | None = None,
        drop: Drop | None = None,
    ) -> list[str]:
        """The full argv: unshare, the launcher with its fixed code and config, then `argv`.

        The payload follows `--` as separate arguments; it is never interpolated into any script.
        With `drop` (the harness is root, `user.py`) all of it starts as the command's
        unprivileged user; masks it cannot reach are left out.
        """
        seen = drop.keep if drop else list
        program = deny_list_program()
        keep = [cwd, *writable]
        runtime = [] if network else runtime_dirs(keep)
        dirs, files = secret_paths(keep)
        # The harness's own files: the data directory and the open stores (hidden.py).
        own_dirs, own_files = harness_paths(keep)
        dirs, files = [*dirs, *own_dirs], [*files, *own_files]
        config = {
            "cwd": str(cwd),
            "writable": [str(p) for p in writable],
            "readonly": seen(kept_under_tmp(os.environ.get("PATH", ""))),
            "mask_dirs": seen(dirs),
            "mask_files": seen([*files, *(guard.masked if guard else ())]),
            "pin": seen(guard.pinned if guard else ()),
            "protect": seen(guard.readonly if guard else ()),
            "mask_runtime": seen(runtime),
            "mask_sockets": seen(bound_sockets(runtime, keep)),
            "loopback": not network,
            "seccomp": program,
        }
        # marshal, not JSON: the launcher decodes it without importing anything (see its docstring).
        launcher = [self._python, "-I", "-S", str(_LAUNCHER), marshal.dumps(config).hex(), "--"]
        return [*unshare_argv(self._unshare, network=network), "--", *launcher, *argv]

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
        """Run `argv` in `cwd` inside fresh namespaces (see `Sandbox.run`; `guard`: `hidden.Guard`).

        Raises:
            SandboxError: the namespaces could not be set up (never the payload's own failure).
        """
        check_argv(argv)
        cwd, roots = resolve_dirs(cwd, writable)
        inner_env = scrubbed_env(extra=env, network=network, overrides=INSIDE_ENV)
        if resolve_program(argv[0], inner_env["PATH"], cwd) is None:
            return unavailable(argv, self.backend, f"{argv[0]}: command not found")
        drop = plan(self.backend, cwd, roots)
        launch = Launch(
            argv=self.command(argv, cwd, network=network, writable=roots, guard=guard, drop=drop),
            env=inner_env,
            cwd=cwd,
            rlimits=rlimits_for(limits),
            wrapped=True,
            drop=drop,
        )
        result = await run_capped(
            launch, argv=argv, limits=limits, backend=self.backend, on_output=on_output
        )
        first = result.stderr.partition("\n")[0]
        if result.exit_code == _ns_launcher.EXEC_FAILED and first.startswith(_EXEC_FAILED):
            return unavailable(argv, self.backend, first)
        if result.exit_code == SETUP_FAILED and first.startswith(SETUP_LINE):
            raise setup_error(self.backend, first)
        if result.exit_code == _ns_launcher.SETUP_FAILED and first.startswith(_SETUP_FAILED):
            raise SandboxError(f"{self.backend}: {first}")
        return result

    @classmethod
    def self_test(cls, *, dropped: bool = False) -> str | None:
        """Start `true` with the real namespaces and mounts once; None when that works.

        `dropped`: as the harness's commands would start as root (`user.py`).
        """
        sandbox = cls()
        if shutil.which(sandbox._unshare) is None:
            return "util-linux unshare not found"
        with tempfile.TemporaryDirectory(prefix="ioh-probe-") as tmp:
            cwd = Path(tmp).resolve()
            env = scrubbed_env(extra=None, network=False, overrides=INSIDE_ENV)
            try:
                drop = plan(sandbox.backend, cwd, ()) if dropped else None
                done = subprocess.run(
                    sandbox.command(["true"], cwd, network=False, writable=(), drop=drop),
                    preexec_fn=drop.preexec() if drop else None,
                    cwd=cwd,
                    env=env,
                    capture_output=True,
                    timeout=10,
                    check=False,
                )
            except (OSError, subprocess.SubprocessError) as exc:
                return f"unshare could not be started: {exc}"
        if done.returncode != 0:
            why = done.stderr.decode(errors="replace").strip().splitlines()
            return f"namespaces refused ({why[-1] if why else f'exit {done.returncode}'})"
        return None

"""The portable floor (rlimits, clean environment, caps, tree kill) and the uncontained `none`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from ioh_tui.sandbox._env import rlimits_for, scrubbed_env
from ioh_tui.sandbox._runner import Launch, check_argv, resolve_dirs, run_capped
from ioh_tui.sandbox.base import DEFAULT_LIMITS, ExecResult, Limits, OutputSink


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
        cwd: Path,
        *,
        limits: Limits = DEFAULT_LIMITS,
        network: bool = False,
        writable: Sequence[Path] = (),
        env: Mapping[str, str] | None = None,
        on_output: OutputSink | None = None,
    ) -> ExecResult:
        """Run `argv` in `cwd` under rlimits and supervisor caps (see `Sandbox.run`).

        `writable` is accepted for interface parity; the floor cannot confine writes, so every
        directory the user can write stays writable.
        """
        check_argv(argv)
        cwd, _ = resolve_dirs(cwd, ())
        launch = Launch(
            argv=list(argv),
            env=scrubbed_env(extra=env, network=network),
            cwd=cwd,
            rlimits=rlimits_for(limits),
            marked=True,
        )
        return await run_capped(
            launch, argv=argv, limits=limits, backend=self.backend, on_output=on_output
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
        cwd: Path,
        *,
        limits: Limits = DEFAULT_LIMITS,
        network: bool = False,
        writable: Sequence[Path] = (),
        env: Mapping[str, str] | None = None,
        on_output: OutputSink | None = None,
    ) -> ExecResult:
        """Run `argv` in `cwd` with the parent's privileges (see `Sandbox.run`)."""
        check_argv(argv)
        cwd, _ = resolve_dirs(cwd, ())
        launch = Launch(
            argv=list(argv),
            env=scrubbed_env(extra=env, network=True, inherit_all=True),
            cwd=cwd,
            marked=True,
        )
        return await run_capped(
            launch, argv=argv, limits=limits, backend=self.backend, on_output=on_output
        )

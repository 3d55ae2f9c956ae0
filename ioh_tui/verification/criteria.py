"""The criteria: content checks (the weak tier) and the `Command` gate (the project's own check).

Single-file criteria answer `passes(path, contents)`; workspace criteria `passes_in(root)`. Both
return a `GateOutcome`, which is truthy only when the criterion passed. A command that is killed
(cap, signal, timeout) never passes, whatever exit status is expected; a program that cannot be
started is `errored`, not `failed`.
"""

from __future__ import annotations

import os
import shlex
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Self

from ioh_tui.core.errors import ConfigError, SandboxError
from ioh_tui.sandbox.base import GATE_LIMITS, QUIET_ENV, Limits, Sandbox
from ioh_tui.verification.base import (
    GateOutcome,
    InWorkspace,
    OnSubject,
    Stored,
    default_sandbox,
    not_started,
    read_or_empty,
)


def caps_note(limits: Limits) -> str:
    """` (caps: ...)` naming the gate's caps when they differ from `GATE_LIMITS`, else nothing.

    The model and the app's gate pane both read the description: a raised wall clock tells the
    model a long suite may run, and the person why a check took five minutes.
    """
    if limits == GATE_LIMITS:
        return ""
    parts = []
    if limits.wall_s is not None:
        parts.append(f"{limits.wall_s:g} s wall clock")
    if limits.cpu_s is not None:
        parts.append(f"{limits.cpu_s:g} s CPU")
    if limits.memory_mb is not None:
        parts.append(f"{limits.memory_mb} MB memory")
    return f" (caps: {', '.join(parts) or 'none'})"


@dataclass(frozen=True, slots=True)
class FileContains(OnSubject):
    """The subject file contains `needle` (content tier: a stub can satisfy it)."""

    needle: str
    kind: ClassVar[str] = "file_contains"
    stored: ClassVar[tuple[str, ...]] = ("needle",)
    missing_reads_empty: ClassVar[bool] = True
    single_file: ClassVar[bool | None] = True
    runs_commands: ClassVar[bool] = False

    def describe(self) -> str:
        """The criterion, for the model."""
        return f"the file must contain the text {self.needle!r}"

    async def passes(
        self,
        path: Path,
        contents: str,
        sandbox: Sandbox | None = None,
        *,
        scratch: Path | None = None,
    ) -> GateOutcome:
        """Check the subject's contents."""
        if self.needle in contents:
            return GateOutcome("passed", "the file contains the text")
        return GateOutcome("failed", "the file does not contain the text")


@dataclass(frozen=True, slots=True)
class FileEquals(OnSubject):
    """The subject file's contents equal `text` exactly."""

    text: str
    kind: ClassVar[str] = "file_equals"
    stored: ClassVar[tuple[str, ...]] = ("text",)
    missing_reads_empty: ClassVar[bool] = True
    single_file: ClassVar[bool | None] = True
    runs_commands: ClassVar[bool] = False

    def describe(self) -> str:
        """The criterion, for the model."""
        return f"the file's whole contents must equal exactly: {self.text!r}"

    async def passes(
        self,
        path: Path,
        contents: str,
        sandbox: Sandbox | None = None,
        *,
        scratch: Path | None = None,
    ) -> GateOutcome:
        """Check the subject's contents."""
        if contents == self.text:
            return GateOutcome("passed", "the contents are equal")
        return GateOutcome("failed", "the contents differ")


@dataclass(frozen=True, slots=True)
class WorkspaceFileContains(InWorkspace):
    """A workspace file (relative to the root) contains `needle`."""

    file: str
    needle: str
    kind: ClassVar[str] = "workspace_file_contains"
    stored: ClassVar[tuple[str, ...]] = ("file", "needle")
    single_file: ClassVar[bool | None] = False
    runs_commands: ClassVar[bool] = False

    def describe(self) -> str:
        """The criterion, for the model."""
        return f"{self.file} must contain the text {self.needle!r}"

    async def passes_in(
        self, root: Path, sandbox: Sandbox | None = None, *, scratch: Path | None = None
    ) -> GateOutcome:
        """Check the file under `root` (missing or not text reads as empty)."""
        if self.needle in read_or_empty(root / self.file):
            return GateOutcome("passed", f"{self.file} contains the text")
        return GateOutcome("failed", f"{self.file} does not contain the text")


@dataclass(frozen=True, slots=True)
class Command(Stored):
    """Running `argv` (no shell) must exit with `expect_exit`.

    It runs in the workspace root (single-file mode: the subject's directory), in the sandbox, with
    no network. Given a `scratch` directory, the command may write there too and gets it as
    `TMPDIR`, so its temporary files go with the run instead of piling up in the private /tmp
    (a RAM-backed tmpfs) or, on the floor, the host's.
    """

    argv: tuple[str, ...]
    expect_exit: int = 0
    limits: Limits = GATE_LIMITS
    kind: ClassVar[str] = "command"
    stored: ClassVar[tuple[str, ...]] = ("argv", "expect_exit")
    single_file: ClassVar[bool | None] = None
    runs_commands: ClassVar[bool] = True

    def __init__(
        self, argv: list[str] | tuple[str, ...], expect_exit: int = 0, limits: Limits = GATE_LIMITS
    ) -> None:
        if not argv or not all(isinstance(a, str) and a for a in argv[:1]):
            raise ConfigError("a Command gate needs a non-empty argv (program first)")
        object.__setattr__(self, "argv", tuple(argv))
        object.__setattr__(self, "expect_exit", expect_exit)
        object.__setattr__(self, "limits", limits)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        """The gate from its JSON form (`expect_exit` defaults to 0)."""
        return cls(data["argv"], int(data.get("expect_exit", 0)))

    def missing(self, cwd: Path) -> str | None:
        """Why the program cannot be found from `cwd` (None: it can), checked before a run.

        A mistyped gate would otherwise be `errored` only after the first step was paid for.
        """
        program = self.argv[0]
        if "/" in program:
            path = cwd / program
            found = path.is_file() and os.access(path, os.X_OK)
        else:
            found = shutil.which(program) is not None
        return None if found else f"the gate's program {program!r} is not found"

    def describe(self) -> str:
        """The criterion, for the model (and the caps, when they are not the defaults)."""
        return (
            f"running `{shlex.join(self.argv)}` in the workspace root must exit {self.expect_exit}"
            f"{caps_note(self.limits)}"
        )

    async def passes_in(
        self, root: Path, sandbox: Sandbox | None = None, *, scratch: Path | None = None
    ) -> GateOutcome:
        """Run the command in `root`."""
        return await self._run(root, sandbox, scratch)

    async def passes(
        self,
        path: Path,
        contents: str,
        sandbox: Sandbox | None = None,
        *,
        scratch: Path | None = None,
    ) -> GateOutcome:
        """Run the command in the subject's directory."""
        return await self._run(path.parent, sandbox, scratch)

    async def evaluate(
        self,
        root: Path,
        subject: str | None,
        sandbox: Sandbox | None = None,
        *,
        scratch: Path | None = None,
    ) -> GateOutcome:
        """Evaluate in the workspace (single-file: the subject's directory)."""
        cwd = (root / subject).parent if subject else root
        return await self._run(cwd, sandbox, scratch)

    async def _run(self, cwd: Path, sandbox: Sandbox | None, scratch: Path | None) -> GateOutcome:
        sandbox = default_sandbox(sandbox)
        # HOME stays as it is: toolchain launchers (rustup's proxies) resolve from it and fail
        # under a throwaway home (see docs/sandbox.md), so only TMPDIR moves to the scratch.
        env = QUIET_ENV if scratch is None else {**QUIET_ENV, "TMPDIR": str(scratch)}
        writable = () if scratch is None else (scratch,)
        try:
            result = await sandbox.run(
                self.argv, cwd, limits=self.limits, network=False, writable=writable, env=env
            )
        except SandboxError as exc:
            return GateOutcome("errored", f"the sandbox could not start the command: {exc}")
        line = shlex.join(self.argv)
        if result.unavailable:
            return GateOutcome(
                "errored", f"`{line}` could not be started: program not found", result
            )
        if result.cap_hit is not None:
            return GateOutcome("failed", f"`{line}` was killed at its {result.cap_hit} cap", result)
        if result.exit_code is None:
            return GateOutcome("failed", f"`{line}` was killed by signal {result.signal}", result)
        if result.exit_code == self.expect_exit:
            return GateOutcome("passed", f"`{line}` exited {result.exit_code}", result)
        why = not_started(result)
        if why is not None:
            return GateOutcome("errored", f"`{line}` could not run: {why}", result)
        return GateOutcome(
            "failed", f"`{line}` exited {result.exit_code} (expected {self.expect_exit})", result
        )


@dataclass(frozen=True, slots=True)
class NoGate(Stored):
    """No criterion: the run ends `finished` when the model stops calling tools."""

    kind: ClassVar[str] = "none"
    single_file: ClassVar[bool | None] = None
    runs_commands: ClassVar[bool] = False

    def describe(self) -> str:
        """The criterion, for the model."""
        return (
            "there is no automated check; do the work, then reply without calling a tool "
            "to end the run"
        )

    async def evaluate(
        self,
        root: Path,
        subject: str | None,
        sandbox: Sandbox | None = None,
        *,
        scratch: Path | None = None,
    ) -> GateOutcome:
        """Never passes."""
        return GateOutcome("failed", "no criterion")

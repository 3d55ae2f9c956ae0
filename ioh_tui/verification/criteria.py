"""The criteria: content checks (the weak tier) and the `Command` gate (the project's own check).

Single-file criteria answer `passes(path, contents)`; workspace criteria `passes_in(root)`. Both
return a `GateOutcome`, which is truthy only when the criterion passed. A command that is killed
(cap, signal, timeout) never passes, whatever exit status is expected; a program that cannot be
started is `errored`, not `failed`.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal, Protocol

from ioh_tui.core.errors import ConfigError, SandboxError
from ioh_tui.sandbox.base import GATE_LIMITS, QUIET_ENV, ExecResult, Limits, Sandbox

Status = Literal["passed", "failed", "errored"]
OUTPUT_TAIL = 4000
"""Characters of a failed command's output kept as evidence."""


@dataclass(frozen=True, slots=True)
class GateOutcome:
    """The result of one evaluation."""

    status: Status
    detail: str = ""
    result: ExecResult | None = None
    """The command's result, for `Command`."""

    def __bool__(self) -> bool:
        return self.status == "passed"


class Criterion(Protocol):
    """What every criterion offers."""

    kind: ClassVar[str]
    single_file: ClassVar[bool | None]
    """True: single-file only; False: workspace only; None: both."""
    runs_commands: ClassVar[bool]
    """Whether `evaluate` runs programs (and so wants a `scratch` directory for them)."""

    def describe(self) -> str:
        """The sentence the model is shown as its success criterion."""
        ...

    def to_dict(self) -> dict[str, Any]:
        """A JSON form for the stored contract."""
        ...

    async def evaluate(
        self,
        root: Path,
        subject: str | None,
        sandbox: Sandbox | None = None,
        *,
        scratch: Path | None = None,
    ) -> GateOutcome:
        """Evaluate against the workspace (and the subject, in single-file mode).

        `scratch` is the run's ephemeral gate work directory (given when `runs_commands`): it is
        writable inside the sandbox and removed when the run's drive ends.
        """
        ...


def resolve_in(root: Path, rel: str) -> Path:
    """`root / rel`, refusing a path that leaves the workspace (`..`, absolute, via a symlink).

    Raises:
        ConfigError: the path is outside `root`.
    """
    base = root.resolve()
    path = (base / rel).resolve()
    if not path.is_relative_to(base):
        raise ConfigError(f"{rel} is outside the workspace root")
    return path


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""


@dataclass(frozen=True, slots=True)
class FileContains:
    """The subject file contains `needle` (content tier: a stub can satisfy it)."""

    needle: str
    kind: ClassVar[str] = "file_contains"
    single_file: ClassVar[bool | None] = True
    runs_commands: ClassVar[bool] = False

    def describe(self) -> str:
        """The criterion, for the model."""
        return f"the file must contain the text {self.needle!r}"

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {"kind": self.kind, "needle": self.needle}

    async def passes(self, path: Path, contents: str) -> GateOutcome:
        """Check the subject's contents."""
        if self.needle in contents:
            return GateOutcome("passed", "the file contains the text")
        return GateOutcome("failed", "the file does not contain the text")

    async def evaluate(
        self,
        root: Path,
        subject: str | None,
        sandbox: Sandbox | None = None,
        *,
        scratch: Path | None = None,
    ) -> GateOutcome:
        """Evaluate on the subject."""
        path = root / (subject or "")
        return await self.passes(path, _read(path))


@dataclass(frozen=True, slots=True)
class FileEquals:
    """The subject file's contents equal `text` exactly."""

    text: str
    kind: ClassVar[str] = "file_equals"
    single_file: ClassVar[bool | None] = True
    runs_commands: ClassVar[bool] = False

    def describe(self) -> str:
        """The criterion, for the model."""
        return f"the file's whole contents must equal exactly: {self.text!r}"

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {"kind": self.kind, "text": self.text}

    async def passes(self, path: Path, contents: str) -> GateOutcome:
        """Check the subject's contents."""
        if contents == self.text:
            return GateOutcome("passed", "the contents are equal")
        return GateOutcome("failed", "the contents differ")

    async def evaluate(
        self,
        root: Path,
        subject: str | None,
        sandbox: Sandbox | None = None,
        *,
        scratch: Path | None = None,
    ) -> GateOutcome:
        """Evaluate on the subject."""
        path = root / (subject or "")
        return await self.passes(path, _read(path))


@dataclass(frozen=True, slots=True)
class WorkspaceFileContains:
    """A workspace file (relative to the root) contains `needle`."""

    file: str
    needle: str
    kind: ClassVar[str] = "workspace_file_contains"
    single_file: ClassVar[bool | None] = False
    runs_commands: ClassVar[bool] = False

    def describe(self) -> str:
        """The criterion, for the model."""
        return f"{self.file} must contain the text {self.needle!r}"

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {"kind": self.kind, "file": self.file, "needle": self.needle}

    async def passes_in(self, root: Path) -> GateOutcome:
        """Check the file under `root` (missing or not text reads as empty)."""
        if self.needle in _read(root / self.file):
            return GateOutcome("passed", f"{self.file} contains the text")
        return GateOutcome("failed", f"{self.file} does not contain the text")

    async def evaluate(
        self,
        root: Path,
        subject: str | None,
        sandbox: Sandbox | None = None,
        *,
        scratch: Path | None = None,
    ) -> GateOutcome:
        """Evaluate in the workspace."""
        return await self.passes_in(root)


@dataclass(frozen=True, slots=True)
class Command:
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

    def describe(self) -> str:
        """The criterion, for the model."""
        return (
            f"running `{shlex.join(self.argv)}` in the workspace root must exit {self.expect_exit}"
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {"kind": self.kind, "argv": list(self.argv), "expect_exit": self.expect_exit}

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
        if sandbox is None:
            from ioh_tui.sandbox import select

            sandbox = select("auto")
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
        return GateOutcome(
            "failed", f"`{line}` exited {result.exit_code} (expected {self.expect_exit})", result
        )


@dataclass(frozen=True, slots=True)
class NoGate:
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

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {"kind": self.kind}

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


def criterion_from_dict(data: dict[str, Any]) -> Criterion:
    """Rebuild a criterion from its JSON form."""
    kind = data.get("kind")
    if kind == "file_contains":
        return FileContains(data["needle"])
    if kind == "file_equals":
        return FileEquals(data["text"])
    if kind == "workspace_file_contains":
        return WorkspaceFileContains(data["file"], data["needle"])
    if kind == "command":
        return Command(data["argv"], int(data.get("expect_exit", 0)))
    if kind == "none":
        return NoGate()
    # Imported here: those modules build on this one.
    from ioh_tui.verification import documents, rust

    if kind == "compiles_rust":
        return rust.CompilesRust()
    if kind == "rust_test_passes":
        return rust.RustTestPasses(data["test_src"])
    if kind == "each_compiles_rust":
        return rust.EachCompilesRust(data["files"])
    if kind == "workspace_test_passes":
        return rust.WorkspaceTestPasses(data["files"], data["test_src"])
    if kind == "document_contains":
        return documents.DocumentContains(data["file"], data["needle"])
    raise ConfigError(f"unknown verification kind {kind!r}")

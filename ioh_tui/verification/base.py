"""What a criterion is: the `Criterion` protocol, its `GateOutcome`, and the shapes they share.

Every criterion is a frozen dataclass with a `kind` (its stored name) and an `evaluate(root,
subject, sandbox, scratch=)` the engine calls after every step. Two shapes cover all but two of
them: `OnSubject` (single-file mode: `evaluate` reads the subject and asks `passes(path,
contents)`) and `InWorkspace` (`evaluate` asks `passes_in(root)`). `Stored` writes the JSON form
from the fields a criterion names in `stored`, and reads it back.

A criterion that runs programs and is given no sandbox runs them in the strongest one here
(`default_sandbox`): the engine and the command line always pass theirs, so this is for a caller
using a criterion on its own.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal, Protocol, Self

from ioh_tui.core.errors import ConfigError
from ioh_tui.sandbox import select
from ioh_tui.sandbox.base import ExecResult, Sandbox

Status = Literal["passed", "failed", "errored"]


@dataclass(frozen=True, slots=True)
class GateOutcome:
    """The result of one evaluation."""

    status: Status
    detail: str = ""
    result: ExecResult | None = None
    """The command's result, for `Command`."""

    def __bool__(self) -> bool:
        return self.status == "passed"


_NOT_STARTED_EXITS = {
    126: "exit 126: a program it runs could not be executed",
    127: "exit 127: a program it runs was not found",
}
"""The shells' (and `env`'s) statuses for a program that could not be started."""
_TOOLCHAIN_REFUSED = re.compile(
    r"^error: (rustup could not choose a version|toolchain '[^']*' is not installed)"
)
"""rustup's proxy refusing before the real `rustc`/`cargo` ran (no default toolchain, or the
one asked for is missing): nothing was compiled or tested."""


def not_started(result: ExecResult) -> str | None:
    """Why a command that exited never got to run what it was for, or None if it did.

    Exit 126/127 (the program it starts could not be executed or found) and rustup refusing to
    pick a toolchain are the gate not running, so `errored`: they say nothing of the work.
    """
    if result.exit_code in _NOT_STARTED_EXITS:
        return _NOT_STARTED_EXITS[result.exit_code]
    first = result.stderr.lstrip().partition("\n")[0]
    if _TOOLCHAIN_REFUSED.match(first):
        return f"the toolchain refused to start: {first.removeprefix('error: ')}"
    return None


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

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        """The criterion back from its JSON form (a missing field raises `KeyError`)."""
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


def default_sandbox(sandbox: Sandbox | None) -> Sandbox:
    """`sandbox`, or the strongest one available here when none was given."""
    return sandbox if sandbox is not None else select("auto")


def read_or_empty(path: Path) -> str:
    """The file's text; a missing file or one that is not UTF-8 text reads as empty."""
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""


class Stored:
    """The JSON form: `kind` and the fields named in `stored` (tuples written as lists)."""

    __slots__ = ()
    kind: ClassVar[str]
    stored: ClassVar[tuple[str, ...]] = ()
    """The constructor's arguments, in order, that the stored form keeps (never the caps)."""

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        data: dict[str, Any] = {"kind": self.kind}
        for name in self.stored:
            value = getattr(self, name)
            data[name] = list(value) if isinstance(value, tuple) else value
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        """The criterion from its JSON form.

        Raises:
            KeyError: a stored field is missing.
        """
        make: Callable[..., Self] = cls
        return make(*(data[name] for name in cls.stored))


class OnSubject(Stored):
    """A single-file criterion: `evaluate` reads the subject and asks `passes`."""

    __slots__ = ()
    missing_reads_empty: ClassVar[bool] = False
    """True: a missing or unreadable subject is checked as empty text (the content tier);
    False: it fails, naming the subject, and a run with no subject is a configuration error."""

    async def passes(
        self,
        path: Path,
        contents: str,
        sandbox: Sandbox | None = None,
        *,
        scratch: Path | None = None,
    ) -> GateOutcome:
        """Check the subject at `path`, whose text is `contents`."""
        raise NotImplementedError

    async def evaluate(
        self,
        root: Path,
        subject: str | None,
        sandbox: Sandbox | None = None,
        *,
        scratch: Path | None = None,
    ) -> GateOutcome:
        """Evaluate on the subject."""
        if self.missing_reads_empty:
            path = root / (subject or "")
            return await self.passes(path, read_or_empty(path), sandbox, scratch=scratch)
        if subject is None:
            raise ConfigError(f"a single-file {self.kind} criterion needs the subject file")
        path = root / subject
        try:
            contents = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return GateOutcome("failed", f"{subject} does not exist")
        except (OSError, UnicodeDecodeError) as exc:
            return GateOutcome("failed", f"{subject} cannot be read as text: {exc}")
        return await self.passes(path, contents, sandbox, scratch=scratch)


class InWorkspace(Stored):
    """A workspace criterion: `evaluate` asks `passes_in(root)`."""

    __slots__ = ()

    async def passes_in(
        self, root: Path, sandbox: Sandbox | None = None, *, scratch: Path | None = None
    ) -> GateOutcome:
        """Check the workspace at `root`."""
        raise NotImplementedError

    async def evaluate(
        self,
        root: Path,
        subject: str | None,
        sandbox: Sandbox | None = None,
        *,
        scratch: Path | None = None,
    ) -> GateOutcome:
        """Evaluate in the workspace."""
        return await self.passes_in(root, sandbox, scratch=scratch)

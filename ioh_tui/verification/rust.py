"""The Rust gates: a file (or a set of files) compiles, and a caller's test passes against it.

(Just over 400 lines: four gates, each hardened the same way, with their shared build helpers.)

`CompilesRust`, `RustTestPasses` and `WorkspaceTestPasses` are deprecated in favour of `Command`
(`cargo build`, `cargo test`); `EachCompilesRust` is not, since "each file compiles on its own" is
not a question a project's own tooling asks. The three go in the first release that may break the
public names (1.0): interface.md §7 names them, so until then they stay, and a stored contract
naming one still loads. All four carry the 0.8.1 hardening:

- The subject and the criterion stay one crate, so `test_src` reaches the subject's private
  items (a passing implementation is allowed to be private). The criterion sits in a child
  module opening with `use super::*;` that re-imports the prelude macros explicitly, so a subject
  defining `macro_rules! assert` makes the name ambiguous (E0659) instead of capturing it.
- A subject that deletes itself (`#![cfg(any())]`) is caught by a separate compile: the subject
  with a probe item appended is built as an rlib, and a tiny crate is type-checked against it;
  a subject that strips its own items strips the probe, and the reference fails to resolve.
- A test binary that ran no test, or whose summary is missing, does not pass: a subject that is
  deleted only under `cfg(test)` would otherwise leave an empty harness exiting 0.

This is a boundary against the file under verification, not against a hostile author: a subject
can still print a forged test summary and exit 0 from code the test calls. Every `rustc` and the
test binary run through the sandbox with no network, inside an ephemeral directory removed on
every exit path (made inside the run's gate work directory when the engine gives one). A missing
`rustc` or a sandbox that cannot start is `errored`, never `failed`.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from ioh_tui.core.errors import ConfigError, SandboxError
from ioh_tui.sandbox.base import GATE_LIMITS, QUIET_ENV, ExecResult, Limits, Sandbox
from ioh_tui.sandbox.workdir import workdir
from ioh_tui.toolchain import home_env
from ioh_tui.verification.base import (
    GateOutcome,
    InWorkspace,
    OnSubject,
    default_sandbox,
    not_started,
    resolve_in,
)

RUSTC = "rustc"
EDITION = ("--edition", "2021")
"""rustc's own default is 2015, which rejects the syntax of every file written today."""

PRELUDE_MACROS = (
    "assert, assert_eq, assert_ne, debug_assert, debug_assert_eq, debug_assert_ne, panic, "
    "unreachable, todo, unimplemented, matches, vec, format, format_args, print, println, eprint, "
    "eprintln, write, writeln, dbg, concat, stringify"
)
"""Re-imported by name in the criterion module: an explicit import conflicts with a subject's
`macro_rules!` of the same name (an ambiguity error) where the prelude would silently lose."""

_SUMMARY = re.compile(r"^test result: (ok|FAILED)\. (\d+) passed; (\d+) failed", re.MULTILINE)


def _criterion_module(test_src: str) -> str:
    # `extern crate std` inside the module: a `#![no_std]` subject has no `std` in scope, and the
    # module needs one to name the macros by path.
    return (
        "\n\n#[allow(unused_imports)]\nmod __ioh_criterion {\n"
        "    extern crate std;\n"
        "    use super::*;\n"
        f"    use self::std::{{{PRELUDE_MACROS}}};\n"
        f"{test_src}\n}}\n"
    )


async def _step(
    sandbox: Sandbox, argv: list[str], cwd: Path, limits: Limits, what: str
) -> ExecResult | GateOutcome:
    """Run one program of the gate: its result once it exited, else the outcome that decides.

    A program that never ran (not installed, the sandbox refused, exit 126/127, rustup unable to
    pick a toolchain) is `errored`; one that was killed (a cap, a signal) is `failed`: it did not
    exit, so it cannot have passed.
    """
    try:
        result = await sandbox.run(
            argv,
            cwd,
            limits=limits,
            network=False,
            env={**QUIET_ENV, **home_env(), "RUST_BACKTRACE": "0"},
        )
    except SandboxError as exc:
        return GateOutcome("errored", f"the sandbox could not start `{argv[0]}`: {exc}")
    if result.unavailable:
        return GateOutcome(
            "errored", f"`{argv[0]}` could not be started: it is not installed here", result
        )
    if result.cap_hit is not None:
        return GateOutcome("failed", f"{what} was killed at its {result.cap_hit} cap", result)
    if result.exit_code is None:
        return GateOutcome("failed", f"{what} was killed by signal {result.signal}", result)
    why = not_started(result)
    if why is not None:
        return GateOutcome("errored", f"{what} could not run: {why}", result)
    return result


async def check_compiles(
    sandbox: Sandbox, source: str, tmp: Path, limits: Limits = GATE_LIMITS
) -> GateOutcome:
    """The subject compiles as a library and its items survive (the probe), in `tmp`."""
    probe = f"__ioh_probe_{secrets.token_hex(8)}"
    # A fresh name each time: nothing in the subject can know it in advance.
    (tmp / "subject.rs").write_text(
        f"{source}\n\n/// Harness probe.\n#[doc(hidden)]\npub fn {probe}() {{}}\n", encoding="utf-8"
    )
    argv = [RUSTC, *EDITION, "--crate-type", "lib", "--crate-name", "subject"]
    ran = await _step(sandbox, [*argv, "-o", "libsubject.rlib", "subject.rs"], tmp, limits, "rustc")
    if isinstance(ran, GateOutcome):
        return ran
    if ran.exit_code != 0:
        return GateOutcome("failed", "the file does not compile as a Rust library", ran)
    (tmp / "probe.rs").write_text(
        f"extern crate subject;\npub fn check() {{ subject::{probe}() }}\n", encoding="utf-8"
    )
    argv = [RUSTC, *EDITION, "--crate-type", "lib", "--crate-name", "ioh_probe"]
    argv += ["--emit", "metadata", "-o", "libioh_probe.rmeta"]
    argv += ["--extern", "subject=libsubject.rlib", "probe.rs"]
    ran = await _step(sandbox, argv, tmp, limits, "rustc (the probe)")
    if isinstance(ran, GateOutcome):
        return ran
    if ran.exit_code != 0:
        return GateOutcome(
            "failed",
            "the file compiled, but its items did not survive to be type-checked (a crate-level "
            "attribute such as #![cfg(any())] removed them)",
        )
    return GateOutcome("passed", "the file compiles as a Rust library")


async def check_test_passes(
    sandbox: Sandbox, source: str, test_src: str, tmp: Path, limits: Limits = GATE_LIMITS
) -> GateOutcome:
    """The subject compiles, and `test_src` compiled beside it builds and passes, in `tmp`."""
    compiled = await check_compiles(sandbox, source, tmp, limits)
    if not compiled:
        return compiled
    (tmp / "criterion.rs").write_text(source + _criterion_module(test_src), encoding="utf-8")
    # Lints are capped: the criterion's own warnings must not fail a `#![deny(warnings)]` file.
    argv = [RUSTC, *EDITION, "--test", "--cap-lints", "warn", "--crate-name", "subject"]
    ran = await _step(sandbox, [*argv, "-o", "criterion", "criterion.rs"], tmp, limits, "rustc")
    if isinstance(ran, GateOutcome):
        return ran
    if ran.exit_code != 0:
        return GateOutcome("failed", "the test code does not compile against the file", ran)
    ran = await _step(sandbox, ["./criterion"], tmp, limits, "the test binary")
    if isinstance(ran, GateOutcome):
        return ran
    summary = _SUMMARY.search(ran.stdout)
    if ran.exit_code != 0:
        return GateOutcome("failed", f"the test failed (exit {ran.exit_code})", ran)
    if summary is None or summary[1] != "ok" or int(summary[2]) == 0:
        return GateOutcome("failed", "the test binary ran no test, so nothing was checked", ran)
    return GateOutcome("passed", f"{summary[2]} test(s) passed")


def _read_files(root: Path, files: tuple[str, ...]) -> tuple[list[str], GateOutcome | None]:
    """Each file's text, or the failed outcome for the first one missing or not text."""
    texts = []
    for rel in files:
        try:
            texts.append(resolve_in(root, rel).read_text(encoding="utf-8"))
        except FileNotFoundError:
            return [], GateOutcome("failed", f"{rel} does not exist")
        except (OSError, UnicodeDecodeError) as exc:
            return [], GateOutcome("failed", f"{rel} cannot be read as text: {exc}")
    return texts, None


def _files(files: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    # A bare string is a common slip (it would be read as a list of one-letter paths).
    if not isinstance(files, list | tuple) or not files:
        raise ConfigError("a Rust workspace criterion needs a non-empty list of file paths")
    if not all(isinstance(f, str) and f for f in files):
        raise ConfigError("a Rust workspace criterion needs a non-empty list of file paths")
    return tuple(files)


def _fence(test_src: str) -> str:
    return f"\n```rust\n{test_src.strip()}\n```"


@dataclass(frozen=True, slots=True)
class CompilesRust(OnSubject):
    """The subject file compiles as a Rust library, with its items intact.

    Deprecated: use `Command(["cargo", "build"])`, or the compiler of the language in hand.
    """

    limits: Limits = GATE_LIMITS
    """Caps on each program the gate runs (not stored: a stored contract gets the defaults)."""
    kind: ClassVar[str] = "compiles_rust"
    single_file: ClassVar[bool | None] = True
    runs_commands: ClassVar[bool] = True

    def describe(self) -> str:
        """The criterion, for the model."""
        return "the file must compile as a Rust library (rustc, edition 2021)"

    async def passes(
        self,
        path: Path,
        contents: str,
        sandbox: Sandbox | None = None,
        *,
        scratch: Path | None = None,
    ) -> GateOutcome:
        """Compile `contents` (the subject at `path`) in a throwaway directory in `scratch`."""
        async with workdir("ioh-rust-", scratch) as tmp:
            return await check_compiles(default_sandbox(sandbox), contents, tmp, self.limits)


@dataclass(frozen=True, slots=True)
class RustTestPasses(OnSubject):
    """The subject compiles, and `test_src` (e.g. a `#[test] fn`) compiled beside it passes.

    Deprecated: use `Command(["cargo", "test"])` and put the test in the project's own suite.
    """

    test_src: str
    limits: Limits = GATE_LIMITS
    kind: ClassVar[str] = "rust_test_passes"
    stored: ClassVar[tuple[str, ...]] = ("test_src",)
    single_file: ClassVar[bool | None] = True
    runs_commands: ClassVar[bool] = True

    def describe(self) -> str:
        """The criterion, for the model."""
        return (
            "the file must compile as a Rust library (rustc, edition 2021), and this test code, "
            "compiled in a module beside it that can use its items (private ones too), must "
            f"pass:{_fence(self.test_src)}"
        )

    async def passes(
        self,
        path: Path,
        contents: str,
        sandbox: Sandbox | None = None,
        *,
        scratch: Path | None = None,
    ) -> GateOutcome:
        """Compile `contents` with the test beside it and run the test (inside `scratch`)."""
        async with workdir("ioh-rust-", scratch) as tmp:
            return await check_test_passes(
                default_sandbox(sandbox), contents, self.test_src, tmp, self.limits
            )


@dataclass(frozen=True, slots=True)
class EachCompilesRust(InWorkspace):
    """Every listed file (relative to the workspace root) compiles on its own as a Rust library."""

    files: tuple[str, ...]
    limits: Limits
    kind: ClassVar[str] = "each_compiles_rust"
    stored: ClassVar[tuple[str, ...]] = ("files",)
    single_file: ClassVar[bool | None] = False
    runs_commands: ClassVar[bool] = True

    def __init__(self, files: list[str] | tuple[str, ...], limits: Limits = GATE_LIMITS) -> None:
        object.__setattr__(self, "files", _files(files))
        object.__setattr__(self, "limits", limits)

    def describe(self) -> str:
        """The criterion, for the model."""
        return (
            "each of these files must compile on its own as a Rust library (rustc, edition "
            f"2021): {', '.join(self.files)}"
        )

    async def passes_in(
        self, root: Path, sandbox: Sandbox | None = None, *, scratch: Path | None = None
    ) -> GateOutcome:
        """Compile each file in turn; the first that fails decides."""
        texts, failed = _read_files(root, self.files)
        if failed is not None:
            return failed
        chosen = default_sandbox(sandbox)
        for rel, text in zip(self.files, texts, strict=True):
            async with workdir("ioh-rust-", scratch) as tmp:
                outcome = await check_compiles(chosen, text, tmp, self.limits)
            if not outcome:
                return GateOutcome(outcome.status, f"{rel}: {outcome.detail}", outcome.result)
        return GateOutcome("passed", f"all {len(self.files)} file(s) compile")


@dataclass(frozen=True, slots=True)
class WorkspaceTestPasses(InWorkspace):
    """The listed files, concatenated in order, compile, and `test_src` beside them passes.

    Deprecated: use `Command(["cargo", "test"])`, which runs the repository's own suite over the
    whole crate rather than a concatenation of the files listed.
    """

    files: tuple[str, ...]
    test_src: str
    limits: Limits
    kind: ClassVar[str] = "workspace_test_passes"
    stored: ClassVar[tuple[str, ...]] = ("files", "test_src")
    single_file: ClassVar[bool | None] = False
    runs_commands: ClassVar[bool] = True

    def __init__(
        self, files: list[str] | tuple[str, ...], test_src: str, limits: Limits = GATE_LIMITS
    ) -> None:
        object.__setattr__(self, "files", _files(files))
        object.__setattr__(self, "test_src", test_src)
        object.__setattr__(self, "limits", limits)

    def describe(self) -> str:
        """The criterion, for the model."""
        return (
            f"these files, concatenated in this order, must compile as one Rust library (rustc, "
            f"edition 2021): {', '.join(self.files)}; and this test code, compiled in a module "
            f"beside them that can use their items (private ones too), must pass:"
            f"{_fence(self.test_src)}"
        )

    async def passes_in(
        self, root: Path, sandbox: Sandbox | None = None, *, scratch: Path | None = None
    ) -> GateOutcome:
        """Concatenate the files, compile them with the test beside them, run the test."""
        texts, failed = _read_files(root, self.files)
        if failed is not None:
            return failed
        # A comment naming each file, so a compiler error's line can be traced to its file;
        # comments may precede a first file's inner attributes.
        source = "".join(
            f"// ---- {rel} ----\n{text}\n" for rel, text in zip(self.files, texts, strict=True)
        )
        async with workdir("ioh-rust-", scratch) as tmp:
            return await check_test_passes(
                default_sandbox(sandbox), source, self.test_src, tmp, self.limits
            )

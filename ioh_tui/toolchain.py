"""What kind of project the workspace is, and its conventional commands (standard library only).

One marker file in the workspace root decides the ecosystem; the first marker found in `MARKERS`
order wins. `deno.json` comes before `package.json` because a Deno project may carry both and
`npm test` is wrong for it. The .NET markers are globs (`*.csproj`, `*.fsproj`, `*.sln`), so they
are looked for only once every fixed marker but `Makefile` is absent; `Makefile` is checked last of
all, because a great many projects keep one beside their real build system. (The reference digest
notes its code checked `Makefile` before the .NET globs while its documentation listed .NET first;
this follows the documentation, in which `Makefile` is last.)

The package manager comes from the lockfile: running `npm install` in a pnpm workspace writes a
second lockfile the project did not ask for. A directory with no marker reports nothing rather
than a guess. The commands are information for the model, never run by the harness on its own,
except `check`, the cheap type-check run after each edit (see `ioh_tui/tools/checker.py`).
"""

from __future__ import annotations

import os
import shlex
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

Argv = tuple[str, ...]
_COMMANDS = ("install", "build", "test", "lint", "format", "run", "check")


@dataclass(frozen=True, slots=True)
class Toolchain:
    """A detected ecosystem and its conventional commands (each an argv; empty when none)."""

    ecosystem: str
    marker: str
    """The file in the workspace root that decided the ecosystem."""
    manager: str
    install: list[str] = field(default_factory=list)
    build: list[str] = field(default_factory=list)
    test: list[str] = field(default_factory=list)
    lint: list[str] = field(default_factory=list)
    format: list[str] = field(default_factory=list)
    run: list[str] = field(default_factory=list)
    check: list[str] = field(default_factory=list)
    """The type-check run after each edit; only where it is much cheaper than a build."""

    def describe(self) -> str:
        """The `Project:` line the model is shown on every turn."""
        named = [
            (name, argv)
            for name, argv in (
                ("install", self.install),
                ("build", self.build),
                ("test", self.test),
                ("lint", self.lint),
                ("format", self.format),
                ("run", self.run),
            )
            if argv  # a command the ecosystem does not have is not mentioned at all
        ]
        commands = "; ".join(f"{name}: `{shlex.join(argv)}`" for name, argv in named)
        text = (
            f"This looks like a {self.ecosystem} project ({self.marker} in the workspace root, "
            f"driven by {self.manager}). Conventional commands — {commands}."
        )
        if self.check:
            text += (
                f" After each edit the harness runs `{shlex.join(self.check)}` over the whole "
                "workspace and appends what it reports to the edit's result."
            )
        return text + (
            " They are defaults, not instructions: run one with exec when it helps, and if one "
            "fails, look at the project to find the right command."
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON form."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Toolchain:
        """Rebuild from `to_dict`'s form."""
        argv = {k: [str(a) for a in data.get(k, [])] for k in _COMMANDS}
        return cls(str(data["ecosystem"]), str(data["marker"]), str(data["manager"]), **argv)


@dataclass(frozen=True, slots=True)
class _Entry:
    manager: str
    install: Argv = ()
    build: Argv = ()
    test: Argv = ()
    lint: Argv = ()
    format: Argv = ()
    run: Argv = ()
    check: Argv = ()


def _node(m: str) -> _Entry:
    # `tsc`, not `npx tsc`: npx reaches the network to install what it cannot find.
    return _Entry(
        m,
        (m, "install"),
        (m, "run", "build"),
        (m, "test"),
        (m, "run", "lint"),
        (m, "run", "format"),
        (m, "start"),
        ("tsc", "--noEmit"),
    )


def _python(m: str) -> _Entry:
    install: Argv
    prefix: Argv
    if m == "pip":
        # No lockfile manager: the interpreter directly.
        install, prefix = ("python", "-m", "pip", "install", "-e", "."), ("python", "-m")
    else:
        install, prefix = ((m, "sync") if m == "uv" else (m, "install")), (m, "run")
    run = (*prefix, "main") if m == "pip" else (*prefix, "python", "-m", "main")
    return _Entry(
        m,
        install,
        (),
        (*prefix, "pytest"),
        (*prefix, "ruff", "check"),
        (*prefix, "ruff", "format"),
        run,
        ("pyright",),
    )


_FIXED: dict[str, _Entry] = {
    "cargo": _Entry(
        "cargo",
        ("cargo", "fetch"),
        ("cargo", "build"),
        ("cargo", "test"),
        ("cargo", "clippy", "--all-targets"),
        ("cargo", "fmt"),
        ("cargo", "run"),
        ("cargo", "check", "--message-format=json"),
    ),
    "deno": _Entry(
        "deno",
        (),
        ("deno", "check", "."),
        ("deno", "test"),
        ("deno", "lint"),
        ("deno", "fmt"),
        ("deno", "task", "start"),
        ("deno", "check", "."),
    ),
    "go": _Entry(
        "go",
        (),
        ("go", "build", "./..."),
        ("go", "test", "./..."),
        ("go", "vet", "./..."),
        ("gofmt", "-w", "."),
        ("go", "run", "."),
        ("go", "build", "./..."),
    ),
    "maven": _Entry(
        "mvn",
        ("mvn", "-B", "dependency:go-offline"),
        ("mvn", "-B", "compile"),
        ("mvn", "-B", "test"),
        (),
        ("mvn", "-B", "formatter:format"),
        ("mvn", "-B", "exec:java"),
    ),
    "gradle": _Entry(
        "gradle",
        (),
        ("gradle", "build"),
        ("gradle", "test"),
        ("gradle", "check"),
        (),
        ("gradle", "run"),
    ),
    "elixir": _Entry(
        "mix",
        ("mix", "deps.get"),
        ("mix", "compile"),
        ("mix", "test"),
        ("mix", "credo"),
        ("mix", "format"),
        ("mix", "run"),
    ),
    "ruby": _Entry(
        "bundler",
        ("bundle", "install"),
        (),
        ("bundle", "exec", "rake", "test"),
        ("bundle", "exec", "rubocop"),
        ("bundle", "exec", "rubocop", "-a"),
        ("bundle", "exec", "ruby", "main.rb"),
    ),
    "php": _Entry(
        "composer",
        ("composer", "install"),
        (),
        ("composer", "test"),
        ("composer", "lint"),
        (),
        ("php", "-S", "127.0.0.1:8000"),
    ),
    "swift": _Entry(
        "swift",
        ("swift", "package", "resolve"),
        ("swift", "build"),
        ("swift", "test"),
        (),
        ("swift-format", "-i", "-r", "Sources"),
        ("swift", "run"),
    ),
    "cmake": _Entry("cmake", (), ("cmake", "--build", "build"), ("ctest", "--test-dir", "build")),
    "dotnet": _Entry(
        "dotnet",
        ("dotnet", "restore"),
        ("dotnet", "build"),
        ("dotnet", "test"),
        ("dotnet", "format", "--verify-no-changes"),
        ("dotnet", "format"),
        ("dotnet", "run"),
    ),
    "make": _Entry(
        "make",
        (),
        ("make",),
        ("make", "test"),
        ("make", "lint"),
        ("make", "format"),
        ("make", "run"),
    ),
}

MARKERS: tuple[tuple[str, str], ...] = (
    ("Cargo.toml", "cargo"),
    ("deno.json", "deno"),
    ("deno.jsonc", "deno"),
    ("package.json", "node"),
    ("go.mod", "go"),
    ("pyproject.toml", "python"),
    ("requirements.txt", "python"),
    ("pom.xml", "maven"),
    ("build.gradle", "gradle"),
    ("build.gradle.kts", "gradle"),
    ("mix.exs", "elixir"),
    ("Gemfile", "ruby"),
    ("composer.json", "php"),
    ("Package.swift", "swift"),
    ("CMakeLists.txt", "cmake"),
)
"""Fixed root markers in the order they are tried; then `DOTNET_GLOBS`, then `Makefile`."""

DOTNET_GLOBS = ("*.csproj", "*.fsproj", "*.sln")

NODE_LOCKFILES = (
    ("bun.lockb", "bun"),
    ("bun.lock", "bun"),
    ("pnpm-lock.yaml", "pnpm"),
    ("yarn.lock", "yarn"),
)
"""First present wins; none of them means npm."""

PYTHON_LOCKFILES = (("uv.lock", "uv"), ("poetry.lock", "poetry"))
"""First present wins; none of them means pip (the interpreter directly)."""


def _manager(root: Path, lockfiles: tuple[tuple[str, str], ...], default: str) -> str:
    return next((m for name, m in lockfiles if (root / name).is_file()), default)


def _marker(root: Path) -> tuple[str, str] | None:
    for name, ecosystem in MARKERS:
        if (root / name).is_file():
            return name, ecosystem
    for pattern in DOTNET_GLOBS:
        found = sorted(p.name for p in root.glob(pattern) if p.is_file())
        if found:
            return found[0], "dotnet"
    if (root / "Makefile").is_file():
        return "Makefile", "make"
    return None


def detect(root: str | Path) -> Toolchain | None:
    """The toolchain of the project at `root`, or None when no marker is in the root.

    Only the root is examined: a monorepo whose packages carry their own markers gets one
    detection, for the root.

    Args:
        root: the workspace root.

    Returns:
        A fresh `Toolchain` (its lists are the caller's to keep), or None.
    """
    path = Path(root)
    if not path.is_dir():
        return None
    found = _marker(path)
    if found is None:
        return None
    marker, ecosystem = found
    if ecosystem == "node":
        entry = _node(_manager(path, NODE_LOCKFILES, "npm"))
    elif ecosystem == "python":
        entry = _python(_manager(path, PYTHON_LOCKFILES, "pip"))
    else:
        entry = _FIXED[ecosystem]
    return Toolchain(
        ecosystem=ecosystem,
        marker=marker,
        manager=entry.manager,
        install=list(entry.install),
        build=list(entry.build),
        test=list(entry.test),
        lint=list(entry.lint),
        format=list(entry.format),
        run=list(entry.run),
        check=list(entry.check),
    )


_HOMES = (
    ("RUSTUP_HOME", ".rustup"),
    ("CARGO_HOME", ".cargo"),
    ("GOPATH", "go"),
    ("DENO_DIR", ".cache/deno"),
)

OFFLINE_ENV = {
    "CARGO_NET_OFFLINE": "true",
    "GOPROXY": "off",
    "GOTOOLCHAIN": "local",
    "DENO_NO_UPDATE_CHECK": "1",
}
"""Tell the toolchains there is no network, so they fail fast instead of timing out on it."""


def home_env() -> dict[str, str]:
    """Variables that keep a toolchain finding its installation when a sandbox moves `HOME`.

    The contained sandboxes point `HOME` at a private temp directory, where a rustup proxy
    (`rustc`, `cargo`) no longer finds its toolchains. Each home is named explicitly: the
    variable's own value when set, else the conventional directory under the real home, and only
    when that directory exists. Nothing here makes a home writable.
    """
    env: dict[str, str] = {}
    home = Path(os.path.expanduser("~"))
    for var, default in _HOMES:
        value = os.environ.get(var) or str(home / default)
        if Path(value).is_dir():
            env[var] = value
    return env

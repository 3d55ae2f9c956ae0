"""`toolchain.detect`: every row of the table, the lockfile managers, and the ordering rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from ioh_tui.toolchain import Toolchain, detect, home_env


def _project(tmp_path: Path, *names: str) -> Path:
    for name in names:
        (tmp_path / name).write_text("")
    return tmp_path


# (marker, ecosystem, manager, install, build, test, lint, format, run, check)
ROWS = [
    (
        "Cargo.toml",
        "cargo",
        "cargo",
        "cargo fetch",
        "cargo build",
        "cargo test",
        "cargo clippy --all-targets",
        "cargo fmt",
        "cargo run",
        "cargo check --message-format=json",
    ),
    ("deno.json", "deno", "deno", "", "deno check .", "deno test", "deno lint", "deno fmt",
     "deno task start", "deno check ."),
    ("deno.jsonc", "deno", "deno", "", "deno check .", "deno test", "deno lint", "deno fmt",
     "deno task start", "deno check ."),
    ("package.json", "node", "npm", "npm install", "npm run build", "npm test", "npm run lint",
     "npm run format", "npm start", "tsc --noEmit"),
    ("go.mod", "go", "go", "", "go build ./...", "go test ./...", "go vet ./...", "gofmt -w .",
     "go run .", "go build ./..."),
    ("pyproject.toml", "python", "pip", "python -m pip install -e .", "", "python -m pytest",
     "python -m ruff check", "python -m ruff format", "python -m main", "pyright"),
    ("requirements.txt", "python", "pip", "python -m pip install -e .", "", "python -m pytest",
     "python -m ruff check", "python -m ruff format", "python -m main", "pyright"),
    ("pom.xml", "maven", "mvn", "mvn -B dependency:go-offline", "mvn -B compile", "mvn -B test",
     "", "mvn -B formatter:format", "mvn -B exec:java", ""),
    ("build.gradle", "gradle", "gradle", "", "gradle build", "gradle test", "gradle check", "",
     "gradle run", ""),
    ("build.gradle.kts", "gradle", "gradle", "", "gradle build", "gradle test", "gradle check",
     "", "gradle run", ""),
    ("mix.exs", "elixir", "mix", "mix deps.get", "mix compile", "mix test", "mix credo",
     "mix format", "mix run", ""),
    ("Gemfile", "ruby", "bundler", "bundle install", "", "bundle exec rake test",
     "bundle exec rubocop", "bundle exec rubocop -a", "bundle exec ruby main.rb", ""),
    ("composer.json", "php", "composer", "composer install", "", "composer test",
     "composer lint", "", "php -S 127.0.0.1:8000", ""),
    ("Package.swift", "swift", "swift", "swift package resolve", "swift build", "swift test", "",
     "swift-format -i -r Sources", "swift run", ""),
    ("CMakeLists.txt", "cmake", "cmake", "", "cmake --build build", "ctest --test-dir build", "",
     "", "", ""),
    ("App.csproj", "dotnet", "dotnet", "dotnet restore", "dotnet build", "dotnet test",
     "dotnet format --verify-no-changes", "dotnet format", "dotnet run", ""),
    ("Lib.fsproj", "dotnet", "dotnet", "dotnet restore", "dotnet build", "dotnet test",
     "dotnet format --verify-no-changes", "dotnet format", "dotnet run", ""),
    ("All.sln", "dotnet", "dotnet", "dotnet restore", "dotnet build", "dotnet test",
     "dotnet format --verify-no-changes", "dotnet format", "dotnet run", ""),
    ("Makefile", "make", "make", "", "make", "make test", "make lint", "make format", "make run",
     ""),
]  # fmt: skip


@pytest.mark.parametrize("row", ROWS, ids=[r[0] for r in ROWS])
def test_every_row_of_the_table(tmp_path: Path, row: tuple[str, ...]) -> None:
    marker, ecosystem, manager, *commands = row
    found = detect(_project(tmp_path, marker))
    assert found is not None
    assert (found.ecosystem, found.marker, found.manager) == (ecosystem, marker, manager)
    got = [found.install, found.build, found.test, found.lint, found.format, found.run]
    got.append(found.check)
    assert got == [c.split() for c in commands]


def test_fourteen_ecosystems_in_the_table() -> None:
    assert len({r[1] for r in ROWS}) == 14


@pytest.mark.parametrize(
    ("lockfiles", "manager"),
    [
        ((), "npm"),
        (("yarn.lock",), "yarn"),
        (("pnpm-lock.yaml",), "pnpm"),
        (("bun.lock",), "bun"),
        (("bun.lockb",), "bun"),
        (("yarn.lock", "pnpm-lock.yaml"), "pnpm"),
        (("yarn.lock", "pnpm-lock.yaml", "bun.lockb"), "bun"),
    ],
)
def test_node_manager_comes_from_the_lockfile(
    tmp_path: Path, lockfiles: tuple[str, ...], manager: str
) -> None:
    found = detect(_project(tmp_path, "package.json", *lockfiles))
    assert found is not None and found.manager == manager
    assert found.install == [manager, "install"]
    assert found.test == [manager, "test"]
    assert found.run == [manager, "start"]
    assert found.check == ["tsc", "--noEmit"]  # never npx: it would reach the network


def test_the_seed_example(tmp_path: Path) -> None:
    (tmp_path / "package.json").write_text("{}")
    (tmp_path / "pnpm-lock.yaml").write_text("")
    found = detect(tmp_path)
    assert found is not None
    assert (found.ecosystem, found.manager, found.test) == ("node", "pnpm", ["pnpm", "test"])


@pytest.mark.parametrize(
    ("lockfiles", "manager", "install", "test", "run"),
    [
        ((), "pip", "python -m pip install -e .", "python -m pytest", "python -m main"),
        (("poetry.lock",), "poetry", "poetry install", "poetry run pytest",
         "poetry run python -m main"),
        (("uv.lock",), "uv", "uv sync", "uv run pytest", "uv run python -m main"),
        (("uv.lock", "poetry.lock"), "uv", "uv sync", "uv run pytest", "uv run python -m main"),
    ],
)  # fmt: skip
def test_python_manager_comes_from_the_lockfile(
    tmp_path: Path, lockfiles: tuple[str, ...], manager: str, install: str, test: str, run: str
) -> None:
    found = detect(_project(tmp_path, "pyproject.toml", *lockfiles))
    assert found is not None and found.manager == manager
    assert (found.install, found.test, found.run) == (install.split(), test.split(), run.split())
    assert found.lint == [*test.split()[:-1], "ruff", "check"]
    assert found.check == ["pyright"]


@pytest.mark.parametrize(
    ("markers", "ecosystem", "marker"),
    [
        (("package.json", "deno.json"), "deno", "deno.json"),
        (("package.json", "deno.jsonc"), "deno", "deno.jsonc"),
        (("Cargo.toml", "package.json", "Makefile"), "cargo", "Cargo.toml"),
        (("pyproject.toml", "requirements.txt"), "python", "pyproject.toml"),
        (("pyproject.toml", "Makefile"), "python", "pyproject.toml"),
        (("go.mod", "Makefile"), "go", "go.mod"),
        (("CMakeLists.txt", "Makefile"), "cmake", "CMakeLists.txt"),
        (("build.gradle", "build.gradle.kts"), "gradle", "build.gradle"),
        # .NET globs only when no fixed marker but Makefile exists; Makefile is last of all.
        (("App.csproj", "Makefile"), "dotnet", "App.csproj"),
        (("App.csproj", "package.json"), "node", "package.json"),
        (("App.csproj", "CMakeLists.txt"), "cmake", "CMakeLists.txt"),
        (("Z.csproj", "A.csproj"), "dotnet", "A.csproj"),
        (("A.sln", "B.csproj"), "dotnet", "B.csproj"),
    ],
)
def test_the_first_marker_wins(
    tmp_path: Path, markers: tuple[str, ...], ecosystem: str, marker: str
) -> None:
    found = detect(_project(tmp_path, *markers))
    assert found is not None and (found.ecosystem, found.marker) == (ecosystem, marker)


def test_no_marker_reports_nothing(tmp_path: Path) -> None:
    _project(tmp_path, "README.md", "main.c", "Cargo.lock", "yarn.lock")
    assert detect(tmp_path) is None
    assert detect(tmp_path / "missing") is None


def test_only_the_root_is_examined(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "Cargo.toml").write_text("")
    (tmp_path / "package.json").mkdir()  # a directory named like a marker is not a marker
    assert detect(tmp_path) is None


def test_describe_is_the_project_line(tmp_path: Path) -> None:
    found = detect(_project(tmp_path, "go.mod"))
    assert found is not None
    text = found.describe()
    assert text.startswith("This looks like a go project (go.mod in the workspace root, driven by")
    assert "test: `go test ./...`" in text and "format: `gofmt -w .`" in text
    assert "install:" not in text  # a command the ecosystem lacks is not mentioned
    assert "`go build ./...` over the whole workspace" in text
    assert "defaults, not instructions" in text
    (tmp_path / "c").mkdir()
    cmake = detect(_project(tmp_path / "c", "CMakeLists.txt"))
    assert cmake is not None and "After each edit" not in cmake.describe()


def test_detect_returns_fresh_lists_and_round_trips(tmp_path: Path) -> None:
    first = detect(_project(tmp_path, "Cargo.toml"))
    assert first is not None
    first.test.append("--release")
    second = detect(tmp_path)
    assert second is not None and second.test == ["cargo", "test"]
    assert Toolchain.from_dict(second.to_dict()) == second


def test_home_env_names_existing_homes_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "rustup").mkdir()
    monkeypatch.setenv("RUSTUP_HOME", str(tmp_path / "rustup"))
    monkeypatch.setenv("CARGO_HOME", str(tmp_path / "no-such-dir"))
    monkeypatch.setenv("HOME", str(tmp_path))
    env = home_env()
    assert env["RUSTUP_HOME"] == str(tmp_path / "rustup")
    assert "CARGO_HOME" not in env

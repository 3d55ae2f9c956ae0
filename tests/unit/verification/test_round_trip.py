"""Every criterion round-trips through its stored form and says what it checks."""

from __future__ import annotations

import pytest

from ioh_tui import verification
from ioh_tui.core.errors import ConfigError
from ioh_tui.verification import (
    CRITERION_TYPES,
    Command,
    CompilesRust,
    Criterion,
    DocumentContains,
    EachCompilesRust,
    FileContains,
    FileEquals,
    NoGate,
    RustTestPasses,
    WorkspaceFileContains,
    WorkspaceTestPasses,
    criterion_from_dict,
)

TEST_SRC = "#[test]\nfn answer() { assert_eq!(hello(), 42); }"

CRITERIA: list[Criterion] = [
    FileContains("fn hello"),
    FileEquals("exact"),
    Command(["cargo", "test"], expect_exit=0),
    NoGate(),
    CompilesRust(),
    RustTestPasses(TEST_SRC),
    WorkspaceFileContains("a.txt", "x"),
    DocumentContains("r.docx", "Total"),
    EachCompilesRust(["src/a.rs", "src/b.rs"]),
    WorkspaceTestPasses(["src/lib.rs", "src/parse.rs"], TEST_SRC),
]


@pytest.mark.parametrize("criterion", CRITERIA, ids=lambda c: c.kind)
def test_round_trip(criterion: Criterion) -> None:
    again = criterion_from_dict(criterion.to_dict())
    assert again == criterion and type(again) is type(criterion)
    assert again.describe() == criterion.describe()


def test_modes() -> None:
    single = {c.kind for c in CRITERIA if c.single_file is True}
    workspace = {c.kind for c in CRITERIA if c.single_file is False}
    assert single == {"file_contains", "file_equals", "compiles_rust", "rust_test_passes"}
    assert workspace == {
        "workspace_file_contains",
        "document_contains",
        "each_compiles_rust",
        "workspace_test_passes",
    }


def test_rust_descriptions_show_the_test_the_model_must_pass() -> None:
    assert "compile as a Rust library" in CompilesRust().describe()
    for criterion in (RustTestPasses(TEST_SRC), WorkspaceTestPasses(["a.rs"], TEST_SRC)):
        text = criterion.describe()
        assert "```rust\n#[test]\nfn answer()" in text and "private ones too" in text
    assert "src/a.rs, src/b.rs" in EachCompilesRust(["src/a.rs", "src/b.rs"]).describe()
    assert "concatenated in this order" in WorkspaceTestPasses(["a.rs", "b.rs"], "").describe()


@pytest.mark.parametrize("files", [[], "src/lib.rs", [""], [3]])
def test_rust_file_lists_are_checked(files: object) -> None:
    with pytest.raises(ConfigError):
        EachCompilesRust(files)  # type: ignore[arg-type]
    with pytest.raises(ConfigError):
        WorkspaceTestPasses(files, TEST_SRC)  # type: ignore[arg-type]


def test_unknown_kind_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="unknown verification kind"):
        criterion_from_dict({"kind": "compiles_cobol"})


def test_every_exported_criterion_is_in_the_kind_table() -> None:
    exported = {
        getattr(verification, name)
        for name in verification.__all__
        if isinstance(getattr(verification, name), type)
        and hasattr(getattr(verification, name), "kind")
    }
    assert exported == set(CRITERION_TYPES.values())
    assert {c.kind for c in CRITERIA} == set(CRITERION_TYPES)


@pytest.mark.parametrize(
    ("data", "missing"),
    [
        ({"kind": "file_contains"}, "needle"),
        ({"kind": "workspace_test_passes", "files": ["a.rs"]}, "test_src"),
        ({"kind": "command"}, "argv"),
    ],
)
def test_a_missing_field_names_itself(data: dict[str, object], missing: str) -> None:
    with pytest.raises(KeyError) as raised:
        criterion_from_dict(data)
    assert raised.value.args[0] == missing


def test_a_stored_command_without_expect_exit_expects_zero() -> None:
    assert criterion_from_dict({"kind": "command", "argv": ["make"]}) == Command(["make"], 0)

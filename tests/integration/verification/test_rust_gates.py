"""The Rust gates against the real rustc, through the sandbox: passes, failures and both attacks."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from ioh_tui.sandbox import Limits, Sandbox, probe, select
from ioh_tui.sandbox.user import ROOT_USER_ENV
from ioh_tui.verification import (
    CompilesRust,
    EachCompilesRust,
    RustTestPasses,
    WorkspaceTestPasses,
)

pytestmark = pytest.mark.skipif(shutil.which("rustc") is None, reason="rustc is not installed")

GOOD = "pub fn hello() -> u32 { 42 }\nfn private_helper() -> bool { true }\n"
TEST = "#[test]\nfn answer() {\n    assert_eq!(hello(), 42);\n    assert!(private_helper());\n}\n"
IMPOSSIBLE = '#[test]\nfn never() { assert!(false, "this gate can never pass"); }\n'
SHADOW = "macro_rules! assert { ($($t:tt)*) => {} }\n" + GOOD
EXPORTED_SHADOW = "#[macro_export]\nmacro_rules! assert { ($($t:tt)*) => {} }\n" + GOOD
DELETED = '#![cfg(any())]\npub fn hello() -> u32 { "not a number" }\n'


@pytest.fixture
def floor() -> Sandbox:
    return select("floor")


async def test_compiles_rust(floor: Sandbox) -> None:
    gate = CompilesRust()
    assert await gate.passes(Path("lib.rs"), GOOD, floor)
    stub = await gate.passes(Path("lib.rs"), "fn hello", floor)
    assert stub.status == "failed" and "does not compile" in stub.detail
    assert stub.result is not None and "error" in stub.result.stderr


async def test_legitimate_crate_attributes_are_unaffected(floor: Sandbox) -> None:
    for head in ("#![allow(dead_code)]\n", "#![no_std]\n", "#![deny(missing_docs)]\n//! Docs.\n"):
        src = head + "/// Hello.\npub fn hello() -> u32 { 42 }\n"
        assert await CompilesRust().passes(Path("lib.rs"), src, floor), head


async def test_deletion_attack_fails_the_probe(floor: Sandbox) -> None:
    outcome = await CompilesRust().passes(Path("lib.rs"), DELETED, floor)
    assert outcome.status == "failed" and "did not survive" in outcome.detail
    tested = await RustTestPasses(TEST).passes(Path("lib.rs"), DELETED, floor)
    assert tested.status == "failed" and "did not survive" in tested.detail


async def test_test_passes_and_reaches_private_items(floor: Sandbox) -> None:
    outcome = await RustTestPasses(TEST).passes(Path("lib.rs"), GOOD, floor)
    assert outcome.status == "passed", outcome
    wrong = await RustTestPasses(TEST).passes(Path("lib.rs"), GOOD.replace("42", "41"), floor)
    assert wrong.status == "failed" and wrong.result is not None
    assert "assertion" in wrong.result.stdout + wrong.result.stderr


@pytest.mark.parametrize("subject", [SHADOW, EXPORTED_SHADOW], ids=["local", "exported"])
async def test_shadowing_assert_cannot_pass_an_impossible_criterion(
    floor: Sandbox, subject: str
) -> None:
    outcome = await RustTestPasses(IMPOSSIBLE).passes(Path("lib.rs"), subject, floor)
    assert outcome.status == "failed" and "does not compile against" in outcome.detail
    assert outcome.result is not None and "E0659" in outcome.result.stderr


async def test_a_subject_deleted_only_under_test_ran_no_test(floor: Sandbox) -> None:
    # Survives the probe (compiled without --test), then vanishes from the test binary.
    subject = "#![cfg(not(test))]\n" + GOOD
    outcome = await RustTestPasses(IMPOSSIBLE).passes(Path("lib.rs"), subject, floor)
    assert outcome.status == "failed" and "ran no test" in outcome.detail


async def test_a_criterion_with_no_test_does_not_pass(floor: Sandbox) -> None:
    outcome = await RustTestPasses("fn not_a_test() {}").passes(Path("lib.rs"), GOOD, floor)
    assert outcome.status == "failed" and "ran no test" in outcome.detail


@pytest.mark.slow
async def test_a_killed_test_binary_never_passes(floor: Sandbox) -> None:
    gate = RustTestPasses(
        "#[test]\nfn spins() { loop { std::hint::black_box(0); } }",
        limits=Limits(cpu_s=20, wall_s=2, memory_mb=2048),
    )
    outcome = await gate.passes(Path("lib.rs"), GOOD, floor)
    assert outcome.status == "failed" and "killed at its wall cap" in outcome.detail


async def test_missing_rustc_is_errored_not_failed(
    floor: Sandbox, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # the sandbox's PATH comes from ours
    outcome = await CompilesRust().passes(Path("lib.rs"), GOOD, floor)
    assert outcome.status == "errored" and "`rustc` could not be started" in outcome.detail
    (tmp_path / "lib.rs").write_text(GOOD)
    each = await EachCompilesRust(["lib.rs"]).passes_in(tmp_path, floor)
    assert each.status == "errored"


async def test_each_compiles_rust(tmp_path: Path, floor: Sandbox) -> None:
    (tmp_path / "a.rs").write_text(GOOD)
    (tmp_path / "b.rs").write_text("pub fn b() -> u8 { 1 }\n")
    (tmp_path / "gone.rs").write_text(DELETED)
    assert await EachCompilesRust(["a.rs", "b.rs"]).passes_in(tmp_path, floor)
    one_bad = await EachCompilesRust(["a.rs", "gone.rs"]).passes_in(tmp_path, floor)
    assert one_bad.status == "failed" and one_bad.detail.startswith("gone.rs: ")
    missing = await EachCompilesRust(["a.rs", "nope.rs"]).passes_in(tmp_path, floor)
    assert missing.status == "failed" and "nope.rs does not exist" in missing.detail


async def test_workspace_test_passes_concatenates_in_order(tmp_path: Path, floor: Sandbox) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "lib.rs").write_text("#![allow(dead_code)]\nfn base() -> u32 { 40 }\n")
    (tmp_path / "src" / "parse.rs").write_text("fn parse(s: &str) -> u32 { base() + 2 }\n")
    test = '#[test]\nfn parsed() { assert_eq!(parse("x"), 42); }'
    gate = WorkspaceTestPasses(["src/lib.rs", "src/parse.rs"], test)
    assert (await gate.evaluate(tmp_path, None, floor)).status == "passed"
    (tmp_path / "src" / "parse.rs").write_text(
        "macro_rules! assert_eq { ($($t:tt)*) => {} }\nfn parse(s: &str) -> u32 { 0 }\n"
    )
    shadowed = await gate.evaluate(tmp_path, None, floor)
    assert shadowed.status == "failed" and shadowed.result is not None
    assert "E0659" in shadowed.result.stderr


async def test_evaluate_reads_the_subject_file(tmp_path: Path, floor: Sandbox) -> None:
    (tmp_path / "lib.rs").write_text(GOOD)
    assert await RustTestPasses(TEST).evaluate(tmp_path, "lib.rs", floor)
    missing = await CompilesRust().evaluate(tmp_path, "other.rs", floor)
    assert missing.status == "failed" and "does not exist" in missing.detail


@pytest.mark.skipif(
    sys.platform != "linux" or "bwrap" not in probe(), reason="needs the bubblewrap rung"
)
async def test_contained_sandbox_still_finds_the_toolchain() -> None:
    # bwrap moves HOME; rustup's proxies then need RUSTUP_HOME to find their toolchain.
    assert os.environ.get("HOME")
    outcome = await RustTestPasses(TEST).passes(Path("lib.rs"), GOOD, select("bwrap"))
    assert outcome.status == "passed", outcome


@pytest.mark.skipif(shutil.which("rustup") is None, reason="rustup is not installed")
async def test_rustc_that_cannot_choose_a_toolchain_is_errored_not_failed(
    floor: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The gate hands rustc the real RUSTUP_HOME; an empty one has no toolchain to choose.
    empty = tmp_path / "rustup-home"
    empty.mkdir()
    monkeypatch.setenv("RUSTUP_HOME", str(empty))
    # As the harness's own user: a root harness's floor command runs as nobody, to whom a
    # toolchain home is read-only, and rustup then fails writing it before it gets to choose.
    monkeypatch.setenv(ROOT_USER_ENV, "root")
    outcome = await CompilesRust().passes(Path("lib.rs"), GOOD, floor)
    assert outcome.status == "errored", outcome
    assert "rustc could not run: the toolchain refused to start" in outcome.detail

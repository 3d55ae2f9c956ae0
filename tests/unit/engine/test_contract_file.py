"""The TOML contract: every criterion, the gate's caps, and a policy that can loosen the tiers."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from ioh_tui.cli.options import build_policy
from ioh_tui.core.acts import Act, Effect
from ioh_tui.core.errors import ConfigError
from ioh_tui.engine import TaskContract, load_contract_file
from ioh_tui.sandbox.base import GATE_LIMITS, Limits
from ioh_tui.verification import (
    CRITERION_TYPES,
    Command,
    CompilesRust,
    DocumentContains,
    EachCompilesRust,
    FileContains,
    FileEquals,
    NoGate,
    RustTestPasses,
    WorkspaceFileContains,
    WorkspaceTestPasses,
)
from ioh_tui.verification.base import Criterion

EVERY_KIND: dict[str, tuple[str, Criterion]] = {
    "command": ('argv = ["make", "test"]\nexpect_exit = 2', Command(["make", "test"], 2)),
    "none": ("", NoGate()),
    "file_contains": ('needle = "ok"', FileContains("ok")),
    "file_equals": ('text = "x\\n"', FileEquals("x\n")),
    "workspace_file_contains": (
        'file = "a.txt"\nneedle = "ok"',
        WorkspaceFileContains("a.txt", "ok"),
    ),
    "document_contains": ('file = "r.docx"\nneedle = "Total"', DocumentContains("r.docx", "Total")),
    "compiles_rust": ("", CompilesRust()),
    "rust_test_passes": (
        "test_src = '''\n#[test]\nfn t() { assert_eq!(add(1, 2), 3); }\n'''",
        RustTestPasses("#[test]\nfn t() { assert_eq!(add(1, 2), 3); }\n"),
    ),
    "each_compiles_rust": ('files = ["a.rs", "b.rs"]', EachCompilesRust(["a.rs", "b.rs"])),
    "workspace_test_passes": (
        'files = ["lib.rs"]\ntest_src = "#[test] fn t() {}"',
        WorkspaceTestPasses(["lib.rs"], "#[test] fn t() {}"),
    ),
}


def test_every_kind_is_covered() -> None:
    assert set(EVERY_KIND) == set(CRITERION_TYPES)


@pytest.mark.parametrize("kind", sorted(EVERY_KIND))
def test_every_criterion_loads_from_toml(kind: str, tmp_path: Path) -> None:
    body, expected = EVERY_KIND[kind]
    path = tmp_path / "c.toml"
    path.write_text(f'goal = "g"\n\n[verification]\nkind = "{kind}"\n{body}\n')
    assert load_contract_file(path).fields["verification"] == expected


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ('kind = "rust_test_passes"', "kind 'rust_test_passes' needs 'test_src'"),
        ('kind = "each_compiles_rust"\nfiles = []', "files must be a non-empty list"),
        ('kind = "file_contains"\nneedle = 3', "needle must be a string"),
        ('kind = "file_contains"\nneedle = "a"\nargv = ["x"]', "unknown key 'argv' for kind"),
        ('kind = "cargo"', "unknown kind 'cargo'"),
        ('argv = ["x"]\nexpect_exit = "0"', "expect_exit must be an integer"),
    ],
)
def test_a_bad_criterion_is_one_line(table: str, message: str, tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text(f'goal = "g"\n[verification]\n{table}\n')
    with pytest.raises(ConfigError, match=message):
        load_contract_file(path)


def test_gate_caps_load_and_survive_the_stored_form(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text(
        'goal = "g"\n[verification]\nargv = ["pytest"]\n'
        "[gate]\ntimeout_s = 300\ncpu_s = 90.5\nmemory_mb = 4096\n"
    )
    caps = load_contract_file(path).fields["gate"]
    assert caps == {"timeout_s": 300, "cpu_s": 90.5, "memory_mb": 4096}
    from ioh_tui.verification.codec import with_gate_limits

    gate = with_gate_limits(Command(["pytest"]), caps)
    contract = TaskContract.workspace("g", tmp_path, gate)
    back = TaskContract.from_dict(contract.to_dict())
    assert isinstance(back.verification, Command)
    assert back.verification.limits == Limits(cpu_s=90.5, wall_s=300, memory_mb=4096)
    assert "(caps: 300 s wall clock, 90.5 s CPU, 4096 MB memory)" in back.verification.describe()
    # A stored contract from before the caps were kept gets the defaults.
    old = contract.to_dict()
    del old["gate"]
    legacy = TaskContract.from_dict(old).verification
    assert isinstance(legacy, Command)
    assert legacy.limits == GATE_LIMITS
    assert "caps" not in legacy.describe()


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", '"300"', "true"])
def test_bad_gate_caps_are_refused(value: str, tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text(f'goal = "g"\n[gate]\ntimeout_s = {value}\n')
    with pytest.raises(ConfigError, match=r"\[gate\]: timeout_s must be a number of seconds"):
        load_contract_file(path)


def test_nan_budgets_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text('goal = "g"\n[budgets]\ntime_budget_s = nan\n')
    with pytest.raises(ConfigError, match=r"budgets\.time_budget_s must be a finite number"):
        load_contract_file(path)


def test_contract_policy_defaults_loosen_as_well_as_tighten(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text('goal = "g"\n[policy.defaults]\nexec = "allow"\nread = "ask"\n')
    policy_toml = load_contract_file(path).policy_toml
    args = argparse.Namespace(policy=None)
    policy = build_policy(args, policy_toml)
    assert policy.check(Act.EXEC, "make test") is Effect.ALLOW
    assert policy.check(Act.READ, "notes.txt") is Effect.ASK
    # Acts the contract leaves out keep their tier; the built-in denies still hold.
    assert policy.check(Act.WRITE, "x.py") is Effect.ASK
    assert policy.check(Act.NET, "example.com") is Effect.DENY
    assert policy.check(Act.READ, ".env") is Effect.DENY

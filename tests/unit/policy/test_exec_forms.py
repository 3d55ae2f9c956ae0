"""Exec rules: rules with a space allow what they say, and known wrappers cannot hide a deny.

Issue 18, items 15 and 10: `allow_exec("ruff *")` and `allow_exec("make test")` (the docs' own
examples) used to leave `ruff check .` at ask, because the program alone was checked apart and
asked; `env rm`, `sudo rm`, `find -delete` and friends got past a deny on `rm`; a rewrite with
quoting (`'rm' -f x`) was split differently by the check and the execution.
"""

from __future__ import annotations

import shlex

import pytest

from ioh_tui.core.acts import Act, Effect
from ioh_tui.policy import Layer, Policy, Rule
from ioh_tui.policy.types import normalise_path_pattern

ALLOWS = Policy.default().layer("project").allow_exec("ruff *", "make test", "pytest")


@pytest.mark.parametrize(
    "argv",
    [["ruff", "check", "."], ["ruff", "format", "src"], ["make", "test"], ["pytest", "-q", "x"]],
)
def test_an_allow_rule_with_a_space_allows_what_it_says(argv: list[str]) -> None:
    assert ALLOWS.check(Act.EXEC, shlex.join(argv)) is Effect.ALLOW


@pytest.mark.parametrize("argv", [["make", "deploy"], ["ruffian"], ["sudo", "ruff", "check"]])
def test_an_allow_rule_allows_nothing_else(argv: list[str]) -> None:
    assert ALLOWS.check(Act.EXEC, shlex.join(argv)) is Effect.ASK


NO_RM = Policy.default().layer("project").allow_exec("*").deny_exec("rm", "rm *")


@pytest.mark.parametrize(
    "argv",
    [
        ["rm", "-rf", "src"],
        ["/bin/rm", "-rf", "src"],
        ["env", "rm", "-rf", "src"],
        ["env", "-i", "A=1", "rm", "x"],
        ["env", "-S", "rm -rf src"],
        ["sudo", "-u", "root", "rm", "x"],
        ["nice", "-n", "5", "rm", "x"],
        ["timeout", "5", "rm", "x"],
        ["timeout", "-s", "KILL", "5s", "/usr/bin/rm", "x"],
        ["nohup", "rm", "x"],
        ["xargs", "-0", "rm"],
        ["find", ".", "-name", "*.py", "-delete"],
        ["find", "src", "-exec", "rm", "{}", ";"],
        ["sh", "-c", "echo hi; rm -rf src"],
        ["bash", "-lc", "true && rm x"],
        ["env", "nice", "timeout", "3", "rm", "x"],
    ],
)
def test_a_wrapper_runs_its_inner_command_for_a_deny(argv: list[str]) -> None:
    assert NO_RM.check(Act.EXEC, shlex.join(argv)) is Effect.DENY


def test_a_quoted_program_is_split_as_the_execution_splits_it() -> None:
    # The exec tool runs shlex.split of an approved rewrite; the check splits the same way.
    assert NO_RM.check(Act.EXEC, "'rm' -f important.txt") is Effect.DENY
    assert NO_RM.check(Act.EXEC, '"r"m -f important.txt') is Effect.DENY


def test_a_remembered_allow_never_beats_a_default_deny() -> None:
    policy = Policy.default().with_layer(Layer("remembered", (Rule(Act.NET, Effect.ALLOW, "*"),)))
    assert policy.check(Act.NET, "evil.example:443") is Effect.DENY
    # Where the default only asks, remembering is what it is for.
    assert (
        policy.with_layer(Layer("remembered", (Rule(Act.EXEC, Effect.ALLOW, "ls *"),))).check(
            Act.EXEC, "ls -la"
        )
        is Effect.ALLOW
    )


@pytest.mark.parametrize(
    ("written", "meant"),
    [
        ("./infra/*", "infra/*"),
        ("/infra/*", "infra/*"),
        ("infra/", "infra/*"),
        ("./infra/", "infra/*"),
        ("infra//main.tf", "infra/main.tf"),
        ("infra/*", "infra/*"),
        ("*.tf", "*.tf"),
    ],
)
def test_a_path_pattern_is_read_in_the_form_targets_take(written: str, meant: str) -> None:
    policy = Policy.default().layer("ops").deny_write(written)
    assert normalise_path_pattern(written) == meant
    assert policy.check(Act.WRITE, "infra/main.tf") is Effect.DENY
    assert Policy.from_toml(policy.to_toml()) == policy

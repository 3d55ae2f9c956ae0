"""Policies read from files: named for their file, deny-first, defaults by scope."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ioh_tui.core.acts import Act, Effect
from ioh_tui.core.errors import ConfigError
from ioh_tui.policy import Policy, Rule
from ioh_tui.policy.stack import FilePolicy, absolute_pattern, stack_files, widens


def _table(*rules: tuple[str, str, str], name: str = "l", **defaults: str) -> dict[str, Any]:
    return {
        "layers": [
            {"name": name, "rules": [{"act": a, "effect": e, "pattern": p} for a, e, p in rules]}
        ],
        "defaults": defaults,
    }


def test_layers_are_named_for_their_scope_and_carry_their_file(tmp_path: Path) -> None:
    user = FilePolicy("user", tmp_path / "u.toml", _table(("write", "deny", "calc.py")))
    policy = stack_files(Policy.default(), [user])
    verdict = policy.explain(Act.WRITE, "calc.py")
    assert (verdict.effect, verdict.layer, verdict.source) == (
        Effect.DENY,
        "user:l",
        str(tmp_path / "u.toml"),
    )
    assert verdict.origin() == f"rule 'calc.py' in layer 'user:l' of {tmp_path / 'u.toml'}"


def test_the_project_cannot_loosen_a_default_the_user_named(tmp_path: Path) -> None:
    user = FilePolicy("user", tmp_path / "u", _table(exec="deny", write="allow"))
    project = FilePolicy("project", tmp_path / "p", _table(exec="allow", read="ask"))
    policy = stack_files(Policy.default(), [user, project])
    assert policy.defaults.exec is Effect.DENY  # the user's choice stands
    assert policy.defaults.write is Effect.ALLOW
    assert policy.defaults.read is Effect.ASK  # an act the user did not name


def test_remembered_files_add_rules_only_and_never_lift_a_default_deny(tmp_path: Path) -> None:
    rules = FilePolicy(
        "user",
        tmp_path / "policy.toml",
        _table(("net", "allow", "*"), ("write", "allow", "a.txt"), name="remembered", net="allow"),
        rules_only=True,
    )
    policy = stack_files(Policy.default(), [rules])
    assert policy.defaults.net is Effect.DENY
    assert policy.check(Act.NET, "example.com") is Effect.DENY
    assert policy.check(Act.WRITE, "a.txt") is Effect.ALLOW


def test_an_absolute_pattern_holds_in_its_own_workspace_only(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    rule = absolute_pattern(Rule(Act.WRITE, Effect.ALLOW, "./src/*.py"), ws)
    assert rule.pattern == f"{ws.resolve()}/src/*.py"
    assert absolute_pattern(Rule(Act.EXEC, Effect.ALLOW, "make *"), ws).pattern == "make *"
    table = {
        "layers": [
            {
                "name": "remembered",
                "rules": [{"act": "write", "effect": "allow", "pattern": rule.pattern}],
            }
        ]
    }
    file = FilePolicy("user", tmp_path / "policy.toml", table, rules_only=True)
    here = stack_files(Policy.default(), [file], ws)
    assert here.check(Act.WRITE, "src/a.py") is Effect.ALLOW
    other = tmp_path / "other"
    other.mkdir()
    assert stack_files(Policy.default(), [file], other).check(Act.WRITE, "src/a.py") is Effect.ASK


def test_only_a_rule_or_default_looser_than_the_tiers_widens() -> None:
    assert not widens(Policy.default().deny_exec("rm *"))
    assert not widens(Policy.default().with_default(Act.WRITE, Effect.DENY))
    assert widens(Policy.default().allow_exec("make *"))
    assert widens(Policy.default().ask_net("pypi.org"))
    assert widens(Policy.default().with_default(Act.EXEC, Effect.ALLOW))


def test_the_stored_form_keeps_each_layers_file_and_a_toml_file_cannot_claim_one(
    tmp_path: Path,
) -> None:
    user = FilePolicy("user", tmp_path / "u.toml", _table(("write", "deny", "calc.py")))
    policy = stack_files(Policy.default(), [user])
    assert Policy.from_json(policy.to_json()) == policy
    with pytest.raises(ConfigError, match="unknown key 'source'"):
        Policy.from_toml('[[policy.layers]]\nname = "x"\nsource = "/etc/passwd"\n')

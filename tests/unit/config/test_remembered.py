"""Remembered rules on disk: saved by scope, listed by a stable ID, revoked, agreement kept."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

import pytest

from ioh_tui.config.remembered import find, revoke, rule_id, rules_in_force, save_rules
from ioh_tui.config.trust import TrustBook
from ioh_tui.core.acts import Act, Effect
from ioh_tui.core.errors import ConfigError
from ioh_tui.policy import Rule

CALC = Rule(Act.WRITE, Effect.ALLOW, "calc.py")
TESTS = Rule(Act.EXEC, Effect.ALLOW, "pytest -q *")


def _ws(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    return ws


def test_a_project_rule_is_saved_in_the_project_and_listed_with_its_file(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    file = save_rules("project", [CALC], ws)
    assert file == ws.resolve() / ".ioh-tui" / "policy.toml"
    found, _ = rules_in_force(ws)
    (mine,) = [r for r in found if r.layer == "project:remembered"]
    assert (mine.rule, mine.file, mine.revocable) == (CALC, str(file), True)
    assert mine.id == rule_id("project:remembered", CALC)
    # The person's own rule needs no agreement: it was recorded with the write.
    assert TrustBook().trusted(ws, "rules", tomllib.loads(file.read_text())["policy"])


def test_a_user_rule_makes_path_patterns_absolute_and_keeps_commands(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    file = save_rules("user", [CALC, TESTS], ws)
    assert file == Path(os.environ["XDG_CONFIG_HOME"]) / "ioh-tui" / "policy.toml"
    found, _ = rules_in_force(ws)
    user = {r.rule.pattern for r in found if r.layer == "user:remembered"}
    assert user == {f"{os.path.realpath(ws)}/calc.py", "pytest -q *"}


def test_saving_keeps_the_files_other_rules_and_never_repeats_one(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    save_rules("project", [CALC], ws)
    save_rules("project", [TESTS, CALC], ws)
    found, _ = rules_in_force(ws)
    assert [r.rule for r in found if r.layer == "project:remembered"] == [CALC, TESTS]


def test_revoke_removes_one_rule_and_keeps_the_others(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    file = save_rules("project", [CALC, TESTS], ws)
    found, _ = rules_in_force(ws)
    target = find(found, rule_id("project:remembered", CALC).upper())
    assert target is not None
    revoke(target, ws)
    after, _ = rules_in_force(ws)
    assert [r.rule for r in after if r.layer == "project:remembered"] == [TESTS]
    assert "calc.py" not in file.read_text()
    # Still agreed to: a person's revoke never makes their own file ask for agreement.
    assert TrustBook().trusted(ws, "rules", tomllib.loads(file.read_text())["policy"])


def test_built_in_rules_are_listed_but_not_revoked(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    found, _ = rules_in_force(ws)
    builtin = next(r for r in found if r.layer == "builtin-secrets")
    assert builtin.file is None and not builtin.revocable
    with pytest.raises(ConfigError, match="built in"):
        revoke(builtin, ws)


USER_CONFIG = """# my defaults
[provider]
name = "openai"  # the one I pay for

[[policy.layers]]
name = "mine"
rules = [
  { act = "exec", effect = "deny", pattern = "rm *" },  # never
  { act = "write", effect = "allow", pattern = "notes/**" },
  { act = "exec", effect = "deny", pattern = "rm *" },
]

[[policy.layers]]
name = "other"
rules = [{ act = "exec", effect = "deny", pattern = "rm *" }, { act = "read", effect = "deny", \
pattern = "x" }]
"""


def test_a_configuration_files_rule_is_cut_out_of_its_text_keeping_comments(
    tmp_path: Path,
) -> None:
    ws = _ws(tmp_path)
    config = Path(os.environ["XDG_CONFIG_HOME"]) / "ioh-tui" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(USER_CONFIG)
    found, _ = rules_in_force(ws)
    mine = next(r for r in found if r.layer == "user:mine" and r.rule.pattern == "rm *")
    assert mine.file == str(config) and mine.revocable
    revoke(mine, ws)
    text = config.read_text()
    # Both copies left its layer; the other layer's copy, the other rule and every comment stay.
    assert "# my defaults" in text and "# the one I pay for" in text and "# never" in text
    after, _ = rules_in_force(ws)
    assert [r.rule.pattern for r in after if r.layer == "user:mine"] == ["notes/**"]
    assert [r.rule.pattern for r in after if r.layer == "user:other"] == ["rm *", "x"]
    other = next(r for r in after if r.layer == "user:other" and r.rule.pattern == "rm *")
    revoke(other, ws)
    final, _ = rules_in_force(ws)
    assert [r.rule.pattern for r in final if r.layer == "user:other"] == ["x"]
    assert tomllib.loads(config.read_text())["provider"] == {"name": "openai"}


def test_a_rule_not_written_as_one_inline_table_is_left_for_the_user(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    config = Path(os.environ["XDG_CONFIG_HOME"]) / "ioh-tui" / "config.toml"
    config.parent.mkdir(parents=True)
    text = (
        '[[policy.layers]]\nname = "mine"\n[[policy.layers.rules]]\n'
        'act = "exec"\neffect = "deny"\npattern = "rm *"\n'
    )
    config.write_text(text)
    found, _ = rules_in_force(ws)
    mine = next(r for r in found if r.layer == "user:mine")
    with pytest.raises(ConfigError, match="edit that file"):
        revoke(mine, ws)
    assert config.read_text() == text


def test_revoking_from_an_agreed_project_configuration_keeps_the_agreement(
    tmp_path: Path,
) -> None:
    ws = _ws(tmp_path)
    (ws / ".ioh-tui").mkdir()
    config = ws / ".ioh-tui" / "config.toml"
    config.write_text(
        '[[policy.layers]]\nname = "team"\nrules = [\n'
        '  { act = "exec", effect = "allow", pattern = "make *" },\n'
        '  { act = "exec", effect = "allow", pattern = "pytest *" },\n]\n'
    )
    TrustBook().trust(ws, "policy", tomllib.loads(config.read_text())["policy"])
    found, _ = rules_in_force(ws)
    make = next(r for r in found if r.rule.pattern == "make *")
    revoke(make, ws)
    after, _ = rules_in_force(ws)  # still agreed: the remaining rule is in force
    assert [r.rule.pattern for r in after if r.layer == "project:team"] == ["pytest *"]


def test_a_cloned_rules_file_stays_unagreed_after_the_person_adds_to_it(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    (ws / ".ioh-tui").mkdir()
    cloned = ws / ".ioh-tui" / "policy.toml"
    cloned.write_text(
        '[[policy.layers]]\nname = "x"\n'
        'rules = [ { act = "exec", effect = "allow", pattern = "*" } ]\n'
    )
    save_rules("project", [CALC], ws)
    table = tomllib.loads(cloned.read_text())["policy"]
    assert not TrustBook().trusted(ws, "rules", table)
    found, config = rules_in_force(ws)
    assert not [r for r in found if r.layer.startswith("project:")]  # left out, as a run does
    assert [kind for kind, _ in config.left_out] == ["rules"]

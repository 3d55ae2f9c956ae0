"""`ioh-tui rules [--json]` and `ioh-tui rules revoke ID` as a user runs them (real processes)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ioh_tui.config.remembered import save_rules
from ioh_tui.core.acts import Act, Effect
from ioh_tui.policy import Rule
from tests.integration.cli.test_exec import ioh

CALC = Rule(Act.WRITE, Effect.ALLOW, "calc.py")


def _listed(workspace: Path, *extra: str) -> list[dict[str, Any]]:
    done = ioh("rules", "--json", "--workspace", str(workspace), *extra)
    assert done.returncode == 0, done.stderr
    rules: list[dict[str, Any]] = json.loads(done.stdout)["rules"]
    return rules


def test_rules_lists_every_rule_with_its_layer_and_file_and_revokes_a_remembered_one(
    project: Path, tmp_path: Path
) -> None:
    file = save_rules("project", [CALC], project)
    policy = tmp_path / "extra.toml"
    policy.write_text(
        '[[policy.layers]]\nname = "ci"\n'
        'rules = [ { act = "exec", effect = "deny", pattern = "curl *" } ]\n'
    )
    rules = _listed(project, "--policy", str(policy))
    (mine,) = [r for r in rules if r["layer"] == "project:remembered"]
    assert (mine["pattern"], mine["file"], mine["revocable"]) == ("calc.py", str(file), True)
    (ci,) = [r for r in rules if r["layer"] == "ci"]
    assert (ci["file"], ci["revocable"]) == (str(policy.resolve()), False)
    assert any(r["layer"] == "builtin-secrets" and r["file"] is None for r in rules)

    text = ioh("rules", "--workspace", str(project))
    assert f"{mine['id']}  project:remembered  write allow calc.py  {file}" in text.stdout

    done = ioh("rules", "revoke", mine["id"], "--workspace", str(project))
    assert done.returncode == 0 and done.stdout.count("\n") == 1
    assert f"revoked {mine['id']}: write allow calc.py" in done.stdout
    assert not [r for r in _listed(project) if r["layer"] == "project:remembered"]


def test_an_unknown_or_fixed_rule_is_one_line_and_exit_2(project: Path, tmp_path: Path) -> None:
    unknown = ioh("rules", "revoke", "deadbeef", "--workspace", str(project))
    assert unknown.returncode == 2 and unknown.stdout == ""
    assert unknown.stderr.count("\n") == 1 and "no rule with ID deadbeef" in unknown.stderr
    builtin = next(r for r in _listed(project) if r["layer"] == "builtin-secrets")
    fixed = ioh("rules", "revoke", builtin["id"], "--workspace", str(project))
    assert fixed.returncode == 2 and "built in" in fixed.stderr
    assert fixed.stderr.count("\n") == 1


def test_a_user_rule_is_listed_with_its_absolute_pattern(project: Path) -> None:
    save_rules("user", [CALC], project)
    (user,) = [r for r in _listed(project) if r["layer"] == "user:remembered"]
    assert user["pattern"] == f"{os.path.realpath(project)}/calc.py"
    assert user["file"] == str(Path(os.environ["XDG_CONFIG_HOME"]) / "ioh-tui" / "policy.toml")

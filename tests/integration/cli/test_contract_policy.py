"""A contract's `policy` table is read as TOML in every form (issue 18, items 14 and 15).

The contract's policy used to be cut out of the file by scanning for `[policy` header lines, so a
policy written with dotted keys or as an inline table was lost. Each form below must deny the
write, and an approving operator must not get past it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ioh_tui.cli import main
from tests.integration.cli.test_exec import write_scenario

RULE = '{ act = "write", effect = "deny", pattern = "./infra/*" }'

FORMS = {
    "headers": f'[[policy.layers]]\nname = "ops"\nrules = [ {RULE} ]\n',
    "dotted keys": f'policy.layers = [ {{ name = "ops", rules = [ {RULE} ] }} ]\n',
    "inline table": f'policy = {{ layers = [ {{ name = "ops", rules = [ {RULE} ] }} ] }}\n',
    "dotted in a table": f'[policy]\nlayers = [ {{ name = "ops", rules = [ {RULE} ] }} ]\n',
}


@pytest.mark.parametrize("form", sorted(FORMS))
def test_the_contracts_policy_denies_in_every_toml_form(
    form: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    workspace = tmp_path / "ws"
    (workspace / "infra").mkdir(parents=True)
    contract = tmp_path / "c.toml"
    # The policy comes last: a table header would capture any key written after it.
    contract.write_text(f'goal = "tidy"\nworkspace = "ws"\n{FORMS[form]}')
    write = {"name": "write_file", "arguments": {"path": "infra/main.tf", "content": "x"}}
    scenario = write_scenario(tmp_path / "s.json", {"tool_calls": [write]}, {"text": "Done."})
    argv = ["exec", "", "--contract", str(contract), "--scenario", str(scenario), "--json"]
    argv += ["--on-approval", "approve", "--sandbox", "floor", "--store", str(tmp_path / "s.db")]
    assert main(argv) == 0, capsys.readouterr().err
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    (finished,) = [e for e in events if e["event"] == "tool_call_finished"]
    assert finished["refused"] is True
    assert not [e for e in events if e["event"] == "approval_requested"]  # a deny, not an ask
    assert not (workspace / "infra" / "main.tf").exists()


def test_a_bad_rule_in_the_contracts_policy_names_the_contract(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "ws").mkdir()
    contract = tmp_path / "c.toml"
    bad = '{ act = "write", effect = "forbid", pattern = "x" }'
    contract.write_text(
        f'goal = "g"\nworkspace = "ws"\npolicy.layers = [ {{ name = "a", rules = [ {bad} ] }} ]\n'
    )
    scenario = write_scenario(tmp_path / "s.json", {"text": "hi"})
    assert main(["exec", "", "--contract", str(contract), "--scenario", str(scenario)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert f"contract {contract}: policy.layers[0].rules[0].effect: 'forbid'" in err


def _write_with(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], defaults: str, user: str | None
) -> list[dict[str, object]]:
    """A run whose contract has `defaults` (and the user's file `user`) writing a.txt."""
    (tmp_path / "ws").mkdir(exist_ok=True)
    if user is not None:
        config = Path(os.environ["XDG_CONFIG_HOME"]) / "ioh-tui" / "config.toml"
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text(user)
    contract = tmp_path / "c.toml"
    contract.write_text(f'goal = "g"\nworkspace = "ws"\n[policy.defaults]\n{defaults}')
    write = {"name": "write_file", "arguments": {"path": "a.txt", "content": "x"}}
    run = {"name": "exec", "arguments": {"argv": ["true"]}}
    scenario = write_scenario(tmp_path / "s.json", {"tool_calls": [write, run]}, {"text": "ok"})
    argv = ["exec", "", "--contract", str(contract), "--scenario", str(scenario), "--json"]
    argv += ["--sandbox", "floor", "--store", str(tmp_path / "s.db")]
    main(argv)
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def _asked(events: list[dict[str, object]]) -> list[object]:
    return [e["act"] for e in events if e["event"] == "approval_requested"]


def test_a_contracts_default_loosens_only_the_act_it_names(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The user's file denies exec by default; the contract allows writes. Writes go unasked, and
    # exec stays the user's deny (it used to fall back to its tier, ask, for every act not named).
    events = _write_with(
        tmp_path, capsys, 'write = "allow"\n', '[policy.defaults]\nexec = "deny"\n'
    )
    assert (tmp_path / "ws" / "a.txt").read_text() == "x"
    assert _asked(events) == []
    run = [e for e in events if e["event"] == "tool_call_finished"][1]
    assert run["refused"] is True


def test_a_contract_cannot_loosen_a_default_the_users_file_names(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    events = _write_with(
        tmp_path, capsys, 'write = "allow"\n', '[policy.defaults]\nwrite = "ask"\n'
    )
    assert "write" in _asked(events)  # the user's ask stands (and the headless answer is deny)
    assert not (tmp_path / "ws" / "a.txt").exists()

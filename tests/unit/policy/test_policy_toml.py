"""The TOML and JSON forms of a policy, their errors, and policy files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ioh_tui.core.errors import ConfigError
from ioh_tui.policy import (
    Act,
    Defaults,
    Effect,
    Layer,
    Policy,
    Rule,
    append_rules_to_file,
    load_policy_file,
)

REFERENCE_EXAMPLE = """
[policy.defaults]
read = "allow"
write = "ask"
exec = "deny"
net = "deny"

[[policy.layers]]
name = "ops-baseline"
rules = [ { act = "write", effect = "deny", pattern = "infra/*" } ]
"""


def test_reads_the_reference_example() -> None:
    policy = Policy.from_toml(REFERENCE_EXAMPLE)
    assert policy == Policy(
        (Layer("ops-baseline", (Rule(Act.WRITE, Effect.DENY, "infra/*"),)),),
        Defaults(Effect.ALLOW, Effect.ASK, Effect.DENY, Effect.DENY),
    )


def test_writes_the_canonical_form() -> None:
    policy = Policy.default().with_default(Act.EXEC, Effect.DENY)
    policy = policy.layer("ops").deny_write("infra/*").layer("empty")
    text = policy.to_toml()
    assert text.startswith(
        '[policy.defaults]\nread = "allow"\nwrite = "ask"\nexec = "deny"\nnet = "deny"\n'
    )
    assert (
        '[[policy.layers]]\nname = "ops"\nrules = [\n'
        '  { act = "write", effect = "deny", pattern = "infra/*" },\n]\n'
    ) in text
    assert text.endswith('[[policy.layers]]\nname = "empty"\nrules = []\n')
    assert Policy.from_toml(text) == policy
    assert Policy.from_toml(text).to_toml() == text


def test_round_trips_awkward_strings() -> None:
    odd = 'quote " back \\ tab \t nl \n cr \r nul \x00 del \x7f bell \x07 é ☃ 𝄞 \u2028'
    policy = Policy.permissive().layer(odd).deny_read(odd)
    assert Policy.from_toml(policy.to_toml()) == policy
    assert Policy.from_json(policy.to_json()) == policy


def test_a_lone_surrogate_cannot_be_written_as_toml_but_survives_json() -> None:
    policy = Policy.permissive().layer("fs").allow_read("bad-\udcff-name")
    with pytest.raises(ConfigError, match=r"policy\.layers\[0\]\.rules\[0\]\.pattern"):
        policy.to_toml()
    assert Policy.from_json(policy.to_json()) == policy
    assert policy.to_json().isascii()


def test_missing_parts_take_the_default_tiers() -> None:
    assert Policy.from_toml("[policy]\n") == Policy()
    policy = Policy.from_toml('[policy.defaults]\nread = "deny"\nwrite = "allow"\nexec = "allow"\n')
    # A policy written before egress was governed must not gain network access.
    assert policy.defaults.net is Effect.DENY
    assert policy.layers == ()
    layer = Policy.from_toml('[[policy.layers]]\nname = "no-rules"\n')
    assert layer.layers == (Layer("no-rules"),)


def test_rules_as_an_array_of_tables_are_read_too() -> None:
    text = (
        '[[policy.layers]]\nname = "a"\n'
        '[[policy.layers.rules]]\nact = "net"\neffect = "allow"\npattern = "h"\n'
    )
    assert Policy.from_toml(text) == Policy().layer("a").allow_net("h")


def test_json_shape_and_round_trip() -> None:
    policy = Policy.default().layer("x").ask_exec("make*")
    data = json.loads(policy.to_json())
    assert data["defaults"] == {
        "read": "allow",
        "write": "ask",
        "exec": "ask",
        "net": "deny",
        "mcp": "ask",
    }
    assert data["layers"][-1] == {
        "name": "x",
        "rules": [{"act": "exec", "effect": "ask", "pattern": "make*"}],
    }
    assert Policy.from_json(policy.to_json()) == policy
    assert Policy.from_dict(policy.to_dict()) == policy


def test_json_without_net_default_denies_net() -> None:
    text = '{"layers": [], "defaults": {"read": "allow", "write": "allow", "exec": "allow"}}'
    assert Policy.from_json(text).check(Act.NET, "example.com:443") is Effect.DENY


def test_a_policy_stored_before_mcp_asks_about_mcp_calls() -> None:
    text = '{"layers": [], "defaults": {"read": "allow", "write": "allow", "exec": "allow"}}'
    assert Policy.from_json(text).check(Act.MCP, "github/create_issue") is Effect.ASK


_BAD_TOML = [
    ("[policy\n", "policy TOML: "),
    ("", "policy TOML: missing the [policy] table"),
    ("[model]\nname = 'x'\n", "policy TOML: unknown key 'model' (expected policy)"),
    ("policy = 3\n", "policy: expected a table, got an integer (3)"),
    ("[policy]\nmode = 'x'\n", "policy: unknown key 'mode' (expected layers, defaults)"),
    ("[policy]\ndefaults = 'deny'\n", "policy.defaults: expected a table, got a string ('deny')"),
    (
        "[policy.defaults]\nnetwork = 'allow'\n",
        "policy.defaults: unknown key 'network' (expected read, write, exec, net, mcp)",
    ),
    (
        "[policy.defaults]\nread = 'yes'\n",
        "policy.defaults.read: 'yes' is not one of allow, ask, deny",
    ),
    ("[policy.defaults]\nread = true\n", "policy.defaults.read: expected a string, got a boolean"),
    (
        "[policy.layers]\nname = 'x'\n",
        "policy.layers: expected an array of tables, got a table",
    ),
    ("[policy]\nlayers = ['x']\n", "policy.layers[0]: expected a table, got a string ('x')"),
    ("[[policy.layers]]\nrules = []\n", "policy.layers[0]: missing key 'name'"),
    (
        "[[policy.layers]]\nname = 7\n",
        "policy.layers[0].name: expected a string, got an integer (7)",
    ),
    (
        "[[policy.layers]]\nname = 'a'\nrule = []\n",
        "policy.layers[0]: unknown key 'rule' (expected name, rules)",
    ),
    (
        "[[policy.layers]]\nname = 'a'\nrules = 'deny all'\n",
        "policy.layers[0].rules: expected an array of tables, got a string ('deny all')",
    ),
    (
        "[[policy.layers]]\nname = 'a'\nrules = [1.5]\n",
        "policy.layers[0].rules[0]: expected a table, got a float (1.5)",
    ),
    (
        "[[policy.layers]]\nname = 'a'\nrules = [{act = 'read', effect = 'deny'}]\n",
        "policy.layers[0].rules[0]: missing key 'pattern'",
    ),
    (
        "[[policy.layers]]\nname = 'a'\n"
        "rules = [{act = 'read', effect = 'deny', patern = '.env'}]\n",
        "policy.layers[0].rules[0]: unknown key 'patern' (expected act, effect, pattern)",
    ),
    (
        "[[policy.layers]]\nname = 'a'\n"
        "rules = [{act = 'delete', effect = 'deny', pattern = '*'}]\n",
        "policy.layers[0].rules[0].act: 'delete' is not one of read, write, exec, net",
    ),
    (
        "[[policy.layers]]\nname = 'a'\nrules = []\n"
        "[[policy.layers]]\nname = 'b'\n"
        "rules = [{act = 'write', effect = 'maybe', pattern = '*'}]\n",
        "policy.layers[1].rules[0].effect: 'maybe' is not one of allow, ask, deny",
    ),
    (
        "[[policy.layers]]\nname = 'a'\n"
        "rules = [{act = 'write', effect = 'deny', pattern = ['*']}]\n",
        "policy.layers[0].rules[0].pattern: expected a string, got an array",
    ),
]


@pytest.mark.parametrize(("text", "message"), _BAD_TOML)
def test_each_toml_error_is_one_line_naming_the_key(text: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        Policy.from_toml(text)
    assert str(caught.value).startswith(message)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{", "policy JSON: "),
        ("[]", "policy: expected a table, got an array"),
        ('{"layers": null}', "policy.layers: expected an array of tables, got null"),
    ],
)
def test_json_errors(text: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        Policy.from_json(text)
    assert str(caught.value).startswith(message)


# -- files ---------------------------------------------------------------------------------------


def test_load_policy_file(tmp_path: Path) -> None:
    path = tmp_path / "policy.toml"
    path.write_text(REFERENCE_EXAMPLE, encoding="utf-8")
    assert load_policy_file(path) == Policy.from_toml(REFERENCE_EXAMPLE)


def test_load_policy_file_errors_name_the_file(tmp_path: Path) -> None:
    missing = tmp_path / "absent.toml"
    with pytest.raises(ConfigError, match=r"absent\.toml: cannot read policy file"):
        load_policy_file(missing)
    bad = tmp_path / "bad.toml"
    bad.write_text("[policy.defaults]\nread = 'sometimes'\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"bad\.toml: policy\.defaults\.read: 'sometimes'"):
        load_policy_file(bad)
    binary = tmp_path / "binary.toml"
    binary.write_bytes(b"\xff\xfe")
    with pytest.raises(ConfigError, match="not UTF-8"):
        load_policy_file(binary)


_NOTES = Rule(Act.WRITE, Effect.ALLOW, "notes.md")
_MAKE = Rule(Act.EXEC, Effect.ALLOW, "make test")


def test_append_creates_a_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "nested" / "policy.toml"
    result = append_rules_to_file(path, "remembered", [_NOTES, _MAKE, _NOTES])
    assert result == Policy().with_layer(Layer("remembered", (_NOTES, _MAKE)))
    assert load_policy_file(path) == result


def test_append_keeps_existing_layers_and_comments(tmp_path: Path) -> None:
    path = tmp_path / "policy.toml"
    original = "# ops decided this in review\n" + REFERENCE_EXAMPLE.strip()  # no final newline
    path.write_text(original, encoding="utf-8")
    result = append_rules_to_file(path, "remembered", [_NOTES])
    text = path.read_text(encoding="utf-8")
    assert text.startswith(original + "\n")
    assert result == Policy.from_toml(REFERENCE_EXAMPLE).with_layer(Layer("remembered", (_NOTES,)))
    assert load_policy_file(path) == result


def test_append_skips_rules_already_remembered(tmp_path: Path) -> None:
    path = tmp_path / "policy.toml"
    append_rules_to_file(path, "remembered", [_NOTES])
    before = path.read_text(encoding="utf-8")
    unchanged = append_rules_to_file(path, "remembered", [_NOTES])
    assert path.read_text(encoding="utf-8") == before
    assert unchanged == load_policy_file(path)
    after = append_rules_to_file(path, "remembered", [_NOTES, _MAKE])
    assert [layer.rules for layer in after.layers] == [(_NOTES,), (_MAKE,)]
    # The same rule under another layer name is a different record and is kept.
    other = append_rules_to_file(path, "other", [_NOTES])
    assert other.layers[-1] == Layer("other", (_NOTES,))


def test_append_rewrites_a_file_with_inline_layers(tmp_path: Path) -> None:
    path = tmp_path / "policy.toml"
    path.write_text(
        "[policy]\nlayers = [{name = 'a', rules = [{act = 'read', effect = 'deny', "
        "pattern = 'x'}]}]\n",
        encoding="utf-8",
    )
    result = append_rules_to_file(path, "remembered", [_NOTES])
    assert [layer.name for layer in result.layers] == ["a", "remembered"]
    assert load_policy_file(path) == result


def test_append_refuses_an_invalid_file(tmp_path: Path) -> None:
    path = tmp_path / "policy.toml"
    path.write_text("[policy]\nlayers = 3\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"policy\.toml: policy\.layers:"):
        append_rules_to_file(path, "remembered", [_NOTES])
    assert path.read_text(encoding="utf-8") == "[policy]\nlayers = 3\n"


def test_append_reports_an_unwritable_place(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("", encoding="utf-8")
    with pytest.raises(ConfigError, match="cannot write policy file"):
        append_rules_to_file(blocker / "policy.toml", "remembered", [_NOTES])

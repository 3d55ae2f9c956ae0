"""A policy is read as TOML, whatever form its tables take (issue 18, items 14 and 15).

Inline tables and dotted keys are the same document to a TOML parser as `[policy.defaults]` and
`[[policy.layers]]` headers; a deny written `./infra/*`, `/infra/*` or `infra/` is never inert.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ioh_tui.policy import Act, Defaults, Effect, Layer, Policy, Rule, load_policy_file

HEADERS = """
[policy.defaults]
exec = "deny"

[[policy.layers]]
name = "ops"
rules = [ { act = "write", effect = "deny", pattern = "./infra/*" } ]
"""

INLINE = """
policy = { defaults = { exec = "deny" }, layers = [
  { name = "ops", rules = [ { act = "write", effect = "deny", pattern = "./infra/*" } ] },
] }
"""

DOTTED = """
policy.defaults.exec = "deny"
policy.layers = [
  { name = "ops", rules = [ { act = "write", effect = "deny", pattern = "./infra/*" } ] },
]
"""

DOTTED_IN_A_TABLE = """
[policy]
defaults.exec = "deny"

[[policy.layers]]
name = "ops"
rules = [ { act = "write", effect = "deny", pattern = "./infra/*" } ]
"""

EXPECTED = Policy(
    (Layer("ops", (Rule(Act.WRITE, Effect.DENY, "./infra/*"),)),),
    Defaults().with_effect(Act.EXEC, Effect.DENY),
)


@pytest.mark.parametrize("text", [HEADERS, INLINE, DOTTED, DOTTED_IN_A_TABLE])
def test_every_toml_form_of_a_policy_reads_the_same(text: str, tmp_path: Path) -> None:
    assert Policy.from_toml(text) == EXPECTED
    file = tmp_path / "policy.toml"
    file.write_text(text)
    policy = load_policy_file(file)
    assert policy == EXPECTED
    assert policy.check(Act.WRITE, "infra/main.tf") is Effect.DENY  # `./` does not make it inert
    assert policy.check(Act.EXEC, "make") is Effect.DENY


@pytest.mark.parametrize("pattern", ["./infra/*", "infra/", "/infra/*", "infra//*"])
def test_a_deny_in_any_spelling_of_a_directory_denies_inside_it(pattern: str) -> None:
    rule = f'{{ act = "read", effect = "deny", pattern = "{pattern}" }}'
    text = f'policy.layers = [ {{ name = "ops", rules = [ {rule} ] }} ]\n'
    policy = Policy.default().merge(Policy.from_toml(text))
    assert policy.check(Act.READ, "infra/secrets/key.txt") is Effect.DENY
    assert policy.check(Act.READ, "src/infra.py") is Effect.ALLOW

"""Policy tiers, builders, evaluation order, net targets, merge and contain."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from ioh_tui.policy import (
    BUILTIN_SECRETS,
    Act,
    Defaults,
    Effect,
    Layer,
    Policy,
    Rule,
    Verdict,
)

# -- tiers ---------------------------------------------------------------------------------------


def test_default_tiers_when_no_rule_matches() -> None:
    policy = Policy.default()
    assert policy.explain(Act.READ, "src/main.py") == Verdict(Effect.ALLOW, None, None)
    assert policy.explain(Act.WRITE, "src/main.py") == Verdict(Effect.ASK, None, None)
    assert policy.explain(Act.EXEC, "pytest -q") == Verdict(Effect.ASK, None, None)
    assert policy.explain(Act.NET, "example.com:443") == Verdict(Effect.DENY, None, None)


@pytest.mark.parametrize(
    ("target", "pattern"),
    [
        (".env", ".env"),
        ("config/.env", ".env"),
        ("deploy/certs/site.pem", "*.pem"),
        ("tls.key", "*.key"),
        ("home/.ssh/id_rsa", "id_rsa"),
        ("id_ed25519", "id_ed25519"),
    ],
)
@pytest.mark.parametrize("act", [Act.READ, Act.WRITE])
def test_default_denies_secrets_by_basename(act: Act, target: str, pattern: str) -> None:
    assert Policy.default().explain(act, target) == Verdict(Effect.DENY, pattern, BUILTIN_SECRETS)


@pytest.mark.parametrize("target", ["id_rsa.pub", ".env.example", "environment.py", "keys/README"])
def test_default_secrets_are_exact_names(target: str) -> None:
    assert Policy.default().check(Act.READ, target) is Effect.ALLOW


def test_secrets_layer_governs_files_not_commands() -> None:
    assert Policy.default().check(Act.EXEC, ".env") is Effect.ASK


def test_permissive_allows_everything_and_says_so() -> None:
    policy = Policy.permissive()
    assert policy.layers == ()
    for act in Act:
        assert policy.check(act, ".env") is Effect.ALLOW
    assert policy.is_permissive()
    assert policy.layer("empty").is_permissive()
    assert not policy.deny_read("x").is_permissive()
    assert not policy.with_default(Act.NET, Effect.ASK).is_permissive()
    assert not Policy.default().is_permissive()


# -- builders ------------------------------------------------------------------------------------

_SUGAR: dict[str, tuple[Act, Effect]] = {
    f"{effect.value}_{act.value}": (act, effect) for act in Act for effect in Effect
}


@pytest.mark.parametrize("name", sorted(_SUGAR))
def test_all_twelve_builders_append_their_rule(name: str) -> None:
    act, effect = _SUGAR[name]
    builder: Callable[[str], Policy] = getattr(Policy.permissive().layer("l"), name)
    assert builder("x/*").layers == (Layer("l", (Rule(act, effect, "x/*"),)),)


def test_generic_builders_match_the_sugar() -> None:
    base = Policy.permissive().layer("l")
    assert base.allow(Act.NET, "h") == base.allow_net("h")
    assert base.ask(Act.EXEC, "make") == base.ask_exec("make")
    assert base.deny(Act.WRITE, "a", "b") == base.deny_write("a").deny_write("b")


def test_rules_go_to_the_last_layer_and_a_first_rule_creates_one() -> None:
    policy = Policy.permissive().deny_write("infra/*").layer("team").allow_exec("make", "pytest")
    assert [layer.name for layer in policy.layers] == ["policy", "team"]
    assert policy.layers[0].rules == (Rule(Act.WRITE, Effect.DENY, "infra/*"),)
    assert [rule.pattern for rule in policy.layers[1].rules] == ["make", "pytest"]


def test_builders_never_change_the_original() -> None:
    base = Policy.default()
    base.deny_read("*").layer("other").with_default(Act.READ, Effect.DENY)
    assert base == Policy.default()


def test_with_layer_and_with_default() -> None:
    layer = Layer("remembered", (Rule(Act.WRITE, Effect.ALLOW, "notes.md"),))
    policy = Policy.default().with_layer(layer).with_default(Act.EXEC, Effect.DENY)
    assert policy.layers[-1] == layer
    assert policy.check(Act.WRITE, "notes.md") is Effect.ALLOW
    assert policy.check(Act.EXEC, "ls") is Effect.DENY


# -- evaluation order ----------------------------------------------------------------------------


def test_deny_beats_an_earlier_and_more_specific_allow() -> None:
    policy = (
        Policy.permissive().layer("first").allow_write("src/main.py").layer("late").deny_write("*")
    )
    assert policy.explain(Act.WRITE, "src/main.py") == Verdict(Effect.DENY, "*", "late")


def test_a_later_layer_cannot_re_allow_a_deny() -> None:
    policy = Policy.default().layer("project").allow_read(".env", "*")
    assert policy.explain(Act.READ, "config/.env") == Verdict(Effect.DENY, ".env", BUILTIN_SECRETS)
    assert policy.explain(Act.READ, "src/a.py") == Verdict(Effect.ALLOW, "*", "project")


def test_the_first_allow_in_layer_order_is_reported() -> None:
    policy = Policy.default().layer("project").allow_read("*.md", "*")
    assert policy.explain(Act.READ, "README.md") == Verdict(Effect.ALLOW, "*.md", "project")
    assert policy.explain(Act.READ, "src/a.py") == Verdict(Effect.ALLOW, "*", "project")


def test_ask_beats_allow_and_deny_beats_ask() -> None:
    policy = Policy.permissive().layer("a").allow_exec("git*").layer("b").ask_exec("git push*")
    assert policy.explain(Act.EXEC, "git push origin") == Verdict(Effect.ASK, "git push*", "b")
    assert policy.check(Act.EXEC, "git status") is Effect.ALLOW
    stricter = policy.layer("c").deny_exec("git push*--force*")
    assert stricter.explain(Act.EXEC, "git push --force") == Verdict(
        Effect.DENY, "git push*--force*", "c"
    )


def test_rules_apply_only_to_their_act() -> None:
    policy = Policy.permissive().deny_write("*")
    assert policy.check(Act.WRITE, "a") is Effect.DENY
    assert policy.check(Act.READ, "a") is Effect.ALLOW
    assert policy.check(Act.EXEC, "a") is Effect.ALLOW


def test_explain_and_check_agree() -> None:
    policy = Policy.default().layer("x").allow_net("*.example.com").ask_write("docs/*")
    for act in Act:
        for target in ["docs/a.md", ".env", "api.example.com:443", "ls"]:
            assert policy.check(act, target) is policy.explain(act, target).effect


# -- net targets ---------------------------------------------------------------------------------


def test_a_host_rule_covers_every_port() -> None:
    policy = Policy.default().layer("net").deny_net("evil.example").allow_net("*")
    assert policy.explain(Act.NET, "evil.example:443") == Verdict(
        Effect.DENY, "evil.example", "net"
    )
    assert policy.check(Act.NET, "evil.example") is Effect.DENY
    assert policy.check(Act.NET, "good.example:80") is Effect.ALLOW


def test_a_host_port_rule_covers_only_that_port() -> None:
    policy = Policy.default().allow_net("api.example.com:443")
    assert policy.check(Act.NET, "api.example.com:443") is Effect.ALLOW
    assert policy.check(Act.NET, "api.example.com:8443") is Effect.DENY
    assert policy.check(Act.NET, "api.example.com") is Effect.DENY


def test_host_globs_and_bracketed_ipv6() -> None:
    policy = Policy.default().allow_net("*.example.com", "[::1]")
    assert policy.check(Act.NET, "api.example.com:8443") is Effect.ALLOW
    assert policy.check(Act.NET, "[::1]:8080") is Effect.ALLOW
    assert policy.check(Act.NET, "example.com:443") is Effect.DENY


def test_only_a_numeric_port_is_stripped() -> None:
    policy = Policy.default().allow_net("host")
    assert policy.check(Act.NET, "host:http") is Effect.DENY
    assert policy.check(Act.NET, "host:") is Effect.DENY


def test_host_forms_are_only_for_net() -> None:
    policy = Policy.permissive().deny_read("notes")
    assert policy.check(Act.READ, "notes:12") is Effect.ALLOW


# -- composition ---------------------------------------------------------------------------------


def test_merge_concatenates_layers_and_takes_stricter_defaults() -> None:
    base = Policy(defaults=Defaults(Effect.ALLOW, Effect.ALLOW, Effect.ASK, Effect.DENY)).layer("a")
    overlay = Policy(defaults=Defaults(Effect.DENY, Effect.ASK, Effect.ALLOW, Effect.ALLOW))
    merged = base.merge(overlay.layer("b").allow_net("h"))
    assert [layer.name for layer in merged.layers] == ["a", "b"]
    assert merged.defaults == Defaults(Effect.DENY, Effect.ASK, Effect.ASK, Effect.DENY)
    # Peers: the overlay's allow counts.
    assert merged.check(Act.NET, "h:443") is Effect.ALLOW


def test_a_remembered_allow_cannot_beat_a_deny() -> None:
    remembered = Policy.permissive().layer("remembered").allow_read("config/.env")
    merged = Policy.default().merge(remembered)
    assert merged.explain(Act.READ, "config/.env") == Verdict(Effect.DENY, ".env", BUILTIN_SECRETS)


def test_contain_drops_child_allows_and_keeps_its_denies_and_asks() -> None:
    child = Policy.permissive().layer("child").allow_net("*").deny_write("infra/*").ask_exec("rm*")
    contained = Policy.default().contain(child)
    assert contained.layers[-1] == Layer(
        "child", (Rule(Act.WRITE, Effect.DENY, "infra/*"), Rule(Act.EXEC, Effect.ASK, "rm*"))
    )
    assert contained.check(Act.NET, "example.com:443") is Effect.DENY
    assert contained.check(Act.WRITE, "infra/main.tf") is Effect.DENY
    assert contained.check(Act.EXEC, "rm -rf build") is Effect.ASK


def test_a_child_ask_cannot_reopen_what_the_parent_denies_by_default() -> None:
    child = Policy.permissive().layer("child").ask_net("api.example.com").ask_write("src/*")
    contained = Policy.default().contain(child)
    assert Policy.default().check(Act.NET, "api.example.com:443") is Effect.DENY
    assert contained.explain(Act.NET, "api.example.com:443") == Verdict(
        Effect.DENY, "api.example.com", "child"
    )
    # Where the default is not deny the ask narrows as written.
    assert contained.explain(Act.WRITE, "src/a.py") == Verdict(Effect.ASK, "src/*", "child")


def test_a_permissive_child_cannot_widen_its_parent() -> None:
    contained = Policy.default().contain(Policy.permissive())
    assert contained.defaults == Policy.default().defaults
    assert contained.check(Act.WRITE, "a.py") is Effect.ASK


def test_contain_narrows_defaults() -> None:
    child = Policy(defaults=Defaults.every(Effect.DENY))
    contained = Policy.permissive().contain(child)
    assert all(contained.check(act, "x") is Effect.DENY for act in Act)


def test_merge_unlike_contain_keeps_allows() -> None:
    overlay = Policy.permissive().allow_write("src/*")
    assert Policy.default().merge(overlay).check(Act.WRITE, "src/a.py") is Effect.ALLOW
    assert Policy.default().contain(overlay).check(Act.WRITE, "src/a.py") is Effect.ASK

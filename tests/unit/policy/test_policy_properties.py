"""Properties of evaluation, containment and serialization over random layer stacks."""

from __future__ import annotations

import re
import shlex

from hypothesis import given, settings
from hypothesis import strategies as st

from ioh_tui.policy import Act, Defaults, Effect, Layer, Policy, Rule
from ioh_tui.policy.glob import glob_to_regex

FAST = settings(max_examples=200, deadline=None)

# Small alphabets make matches common: with arbitrary text almost no pattern matches any target.
_PATTERN = st.one_of(
    st.text("ab/:1*?", max_size=5),
    st.sampled_from(["*", "a*", "*a", "*/*", "?", "b/a", "a:1", "*:1"]),
)
_TARGET = st.text("ab/:1", max_size=5)
_NAME = st.text("abc-", max_size=4)

acts = st.sampled_from(list(Act))
effects = st.sampled_from(list(Effect))
rules = st.builds(Rule, acts, effects, _PATTERN)
layers = st.builds(Layer, _NAME, st.lists(rules, max_size=8).map(tuple))
defaults = st.builds(Defaults, effects, effects, effects, effects)
policies = st.builds(Policy, st.lists(layers, max_size=4).map(tuple), defaults)
targets = st.lists(_TARGET, min_size=1, max_size=6)


def _matches(pattern: str, act: Act, target: str) -> bool:
    """An independent reading of the spec: anchored regex, whole target or basename, net forms."""
    forms = [target]
    if act is Act.NET and (found := re.fullmatch(r"(.+):([0-9]+)", target, re.DOTALL)):
        forms.append(found.group(1))
    if act is Act.EXEC:  # also its program, and both without the program's directory
        words = shlex.split(target) if _splits(target) else target.split()
        if words:
            forms += [shlex.join(words), words[0]]
            # A program path ending in `/` names no program: it has no name form (shlex would
            # quote the empty name as `''`, which two-character patterns would then match).
            if name := words[0].split("/")[-1]:
                forms += [shlex.join([name, *words[1:]]), name]
    patterns = [pattern]
    if act in (Act.READ, Act.WRITE):  # also in the form targets take (`./a/`, `/a` as `a/*`, `a`)
        kept = [part for part in pattern.split("/") if part not in ("", ".")]
        meant = "/".join(kept) + ("/*" if pattern.endswith("/") and kept else "")
        meant = meant if kept or not pattern.endswith("/") else "*"
        patterns += [meant] if meant else []
    return any(
        regex.fullmatch(form) or regex.fullmatch(form.split("/")[-1])
        for glob in patterns
        for regex in [re.compile(glob_to_regex(glob), re.DOTALL)]
        for form in forms
    )


def _splits(line: str) -> bool:
    try:
        shlex.split(line)
    except ValueError:
        return False
    return True


def _matching_effects(policy: Policy, act: Act, target: str) -> set[Effect]:
    return {
        rule.effect
        for layer in policy.layers
        for rule in layer.rules
        if rule.act is act and _matches(rule.pattern, act, target)
    }


@FAST
@given(policy=policies, act=acts, target=_TARGET)
def test_strictest_matching_rule_wins_else_the_default(
    policy: Policy, act: Act, target: str
) -> None:
    found = _matching_effects(policy, act, target)
    expected = max(found, key=lambda e: e.rank) if found else policy.defaults.of(act)
    assert policy.check(act, target) is expected


@FAST
@given(
    policy=policies,
    act=acts,
    target=_TARGET,
    position=st.integers(min_value=0, max_value=4),
    pattern=st.sampled_from(["*", "target"]),
)
def test_a_matching_deny_beats_every_allow_wherever_its_layer_sits(
    policy: Policy, act: Act, target: str, position: int, pattern: str
) -> None:
    rule = Rule(act, Effect.DENY, target if pattern == "target" else "*")
    stack = list(policy.layers)
    stack.insert(min(position, len(stack)), Layer("guard", (rule,)))
    everything_allowed = Policy(
        (*stack, Layer("late", (Rule(act, Effect.ALLOW, "*"), Rule(act, Effect.ALLOW, target)))),
        Defaults.every(Effect.ALLOW),
    )
    assert everything_allowed.check(act, target) is Effect.DENY


@FAST
@given(policy=policies, act=acts, target=_TARGET)
def test_explain_agrees_with_check_and_names_a_real_matching_rule(
    policy: Policy, act: Act, target: str
) -> None:
    verdict = policy.explain(act, target)
    assert verdict.effect is policy.check(act, target)
    if verdict.rule is None:
        assert verdict.layer is None
        assert verdict.effect is policy.defaults.of(act)
        assert not _matching_effects(policy, act, target)
    else:
        named = [layer for layer in policy.layers if layer.name == verdict.layer]
        assert any(Rule(act, verdict.effect, verdict.rule) in layer.rules for layer in named)
        assert _matches(verdict.rule, act, target)


@FAST
@given(
    root=policies,
    children=st.lists(policies, min_size=1, max_size=4),
    act=acts,
    probes=targets,
)
def test_contain_never_grants_what_an_ancestor_lacked(
    root: Policy, children: list[Policy], act: Act, probes: list[str]
) -> None:
    chain = [root]
    for child in children:
        chain.append(chain[-1].contain(child))
    for target in probes:
        ranks = [policy.check(act, target).rank for policy in chain]
        # Each generation is at least as strict as its parent, hence as the root.
        assert ranks == sorted(ranks)
        if chain[-1].check(act, target) is Effect.ALLOW:
            assert root.check(act, target) is Effect.ALLOW
        # And a child's own deny rules survive into its generation and every later one.
        for generation, child in enumerate(children, start=1):
            if Effect.DENY in _matching_effects(child, act, target):
                assert all(p.check(act, target) is Effect.DENY for p in chain[generation:])


@FAST
@given(base=policies, overlay=policies, act=acts, target=_TARGET)
def test_merge_keeps_every_deny_rule_of_either_side(
    base: Policy, overlay: Policy, act: Act, target: str
) -> None:
    merged = base.merge(overlay)
    for side in (base, overlay):
        verdict = side.explain(act, target)
        if verdict.effect is Effect.DENY and verdict.rule is not None:
            assert merged.check(act, target) is Effect.DENY


_TEXT = st.text(st.characters(codec="utf-8"), max_size=12)
serializable = st.builds(
    Policy,
    st.lists(
        st.builds(
            Layer, _TEXT, st.lists(st.builds(Rule, acts, effects, _TEXT), max_size=4).map(tuple)
        ),
        max_size=4,
    ).map(tuple),
    defaults,
)


@FAST
@given(policy=serializable)
def test_toml_round_trip_is_identity(policy: Policy) -> None:
    text = policy.to_toml()
    assert Policy.from_toml(text) == policy
    assert Policy.from_toml(text).to_toml() == text


@FAST
@given(
    policy=st.builds(
        Policy,
        st.lists(
            st.builds(
                Layer,
                st.text(max_size=8),
                st.lists(st.builds(Rule, acts, effects, st.text(max_size=8)), max_size=4).map(
                    tuple
                ),
            ),
            max_size=4,
        ).map(tuple),
        defaults,
    )
)
def test_json_round_trip_is_identity_for_any_text(policy: Policy) -> None:
    assert Policy.from_json(policy.to_json()) == policy

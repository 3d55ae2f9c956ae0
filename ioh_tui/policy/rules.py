"""`Policy`: ordered layers of allow / ask / deny rules plus per-act defaults, and their evaluation.

A policy is immutable; every builder returns a new one, so a run, its children and the app can share
one without defensive copies. Evaluation is by effect before position (every deny, then every ask,
then every allow, each across all layers in order), which is what makes composition safe: adding a
layer can only add allows where nothing denies or asks, and can never lift a deny.

(Just over 400 lines: the built-in layers' special cases, host-executed files and wrapped
commands, are evaluated inside `explain`, and they read best beside the order they bend.)
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

import ioh_tui.policy.toml as _toml
from ioh_tui.core.acts import Act, Effect
from ioh_tui.core.errors import ConfigError
from ioh_tui.policy.argv import exec_forms
from ioh_tui.policy.builtin import HOST_EXECUTED_LAYER, SECRET_PATTERNS, host_executed
from ioh_tui.policy.glob import glob_match_any
from ioh_tui.policy.types import Defaults, Layer, Rule, Verdict, normalise_path_pattern

__all__ = [
    "BUILTIN_SECRETS",
    "SECRET_PATTERNS",
    "Policy",
    "append_rules_to_file",
    "load_policy_file",
]

BUILTIN_SECRETS = "builtin-secrets"
"""The name of the layer `Policy.default()` starts with."""

REMEMBERED = "remembered"
"""The layer of an approver's remembered rules: its allows never beat a default deny."""


_EVALUATION_ORDER = (Effect.DENY, Effect.ASK, Effect.ALLOW)
_UNNAMED_LAYER = "policy"
# `[::1]:443` splits into `[::1]` and `443`; a bare host has no numeric suffix and is tried alone.
_HOST_PORT = re.compile(r"(.+):([0-9]+)", re.DOTALL)


@dataclass(frozen=True, slots=True)
class Policy:
    """Layers of rules and the per-act defaults used when no rule matches.

    Attributes:
        layers: named rule lists, in order (order matters only among rules of one effect).
        defaults: the effect of each act when no rule matches.
    """

    layers: tuple[Layer, ...] = ()
    defaults: Defaults = field(default_factory=Defaults)

    # -- constructors ----------------------------------------------------------------------------

    @classmethod
    def default(cls) -> Policy:
        """Read allow, write ask, exec ask, net deny, mcp ask; secrets (`.env`, keys) denied."""
        rules = tuple(
            Rule(act, Effect.DENY, pattern)
            for pattern in SECRET_PATTERNS
            for act in (Act.READ, Act.WRITE)
        )
        return cls((Layer(BUILTIN_SECRETS, rules),), Defaults())

    @classmethod
    def permissive(cls) -> Policy:
        """Everything allowed, no layers: enforces nothing."""
        return cls((), Defaults.every(Effect.ALLOW))

    # -- builders --------------------------------------------------------------------------------

    def layer(self, name: str) -> Policy:
        """Start a new, empty layer; later rule builders append to it."""
        return Policy((*self.layers, Layer(name)), self.defaults)

    def with_layer(self, layer: Layer) -> Policy:
        """Append a whole layer (e.g. the per-run `remembered` layer)."""
        return Policy((*self.layers, layer), self.defaults)

    def with_default(self, act: Act, effect: Effect) -> Policy:
        """Set the effect `act` gets when no rule matches."""
        return Policy(self.layers, self.defaults.with_effect(Act(act), Effect(effect)))

    def rule(self, act: Act, effect: Effect, pattern: str, *more: str) -> Policy:
        """Append rules to the last layer (creating one named `policy` if there is none)."""
        # Coerced so a rule built from strings ("write") compares and serializes like the enum.
        new = tuple(Rule(Act(act), Effect(effect), p) for p in (pattern, *more))
        if not self.layers:
            return Policy((Layer(_UNNAMED_LAYER, new),), self.defaults)
        last = self.layers[-1]
        return Policy((*self.layers[:-1], replace(last, rules=last.rules + new)), self.defaults)

    def allow(self, act: Act, pattern: str, *more: str) -> Policy:
        """Append allow rules for `act`."""
        return self.rule(act, Effect.ALLOW, pattern, *more)

    def ask(self, act: Act, pattern: str, *more: str) -> Policy:
        """Append ask rules for `act`."""
        return self.rule(act, Effect.ASK, pattern, *more)

    def deny(self, act: Act, pattern: str, *more: str) -> Policy:
        """Append deny rules for `act`."""
        return self.rule(act, Effect.DENY, pattern, *more)

    def allow_read(self, pattern: str, *more: str) -> Policy:
        """Allow reading matching paths."""
        return self.rule(Act.READ, Effect.ALLOW, pattern, *more)

    def ask_read(self, pattern: str, *more: str) -> Policy:
        """Ask before reading matching paths."""
        return self.rule(Act.READ, Effect.ASK, pattern, *more)

    def deny_read(self, pattern: str, *more: str) -> Policy:
        """Refuse reading matching paths."""
        return self.rule(Act.READ, Effect.DENY, pattern, *more)

    def allow_write(self, pattern: str, *more: str) -> Policy:
        """Allow writing matching paths."""
        return self.rule(Act.WRITE, Effect.ALLOW, pattern, *more)

    def ask_write(self, pattern: str, *more: str) -> Policy:
        """Ask before writing matching paths."""
        return self.rule(Act.WRITE, Effect.ASK, pattern, *more)

    def deny_write(self, pattern: str, *more: str) -> Policy:
        """Refuse writing matching paths."""
        return self.rule(Act.WRITE, Effect.DENY, pattern, *more)

    def allow_exec(self, pattern: str, *more: str) -> Policy:
        """Allow running matching programs or argv strings."""
        return self.rule(Act.EXEC, Effect.ALLOW, pattern, *more)

    def ask_exec(self, pattern: str, *more: str) -> Policy:
        """Ask before running matching programs or argv strings."""
        return self.rule(Act.EXEC, Effect.ASK, pattern, *more)

    def deny_exec(self, pattern: str, *more: str) -> Policy:
        """Refuse running matching programs or argv strings."""
        return self.rule(Act.EXEC, Effect.DENY, pattern, *more)

    def allow_net(self, pattern: str, *more: str) -> Policy:
        """Allow the network to matching targets: command lines (`exec`) or `host[:port]`."""
        return self.rule(Act.NET, Effect.ALLOW, pattern, *more)

    def ask_net(self, pattern: str, *more: str) -> Policy:
        """Ask before giving the network to matching targets (command lines, `host[:port]`)."""
        return self.rule(Act.NET, Effect.ASK, pattern, *more)

    def deny_net(self, pattern: str, *more: str) -> Policy:
        """Refuse connecting to matching `host[:port]` targets."""
        return self.rule(Act.NET, Effect.DENY, pattern, *more)

    def allow_mcp(self, pattern: str, *more: str) -> Policy:
        """Allow calls to matching MCP tools (`SERVER/TOOL`; `SERVER/*` for all of a server's)."""
        return self.rule(Act.MCP, Effect.ALLOW, pattern, *more)

    def ask_mcp(self, pattern: str, *more: str) -> Policy:
        """Ask before calls to matching MCP tools (`SERVER/TOOL`)."""
        return self.rule(Act.MCP, Effect.ASK, pattern, *more)

    def deny_mcp(self, pattern: str, *more: str) -> Policy:
        """Refuse calls to matching MCP tools (`SERVER/TOOL`)."""
        return self.rule(Act.MCP, Effect.DENY, pattern, *more)

    # -- evaluation ------------------------------------------------------------------------------

    def explain(self, act: Act, target: str) -> Verdict:
        """The effect of `act` on `target`, and the rule and layer that decided it.

        Every deny rule of every layer is tried first, then every ask, then every allow; within
        one effect, layers and rules in order. So a deny beats an allow whatever their order or
        specificity. Net targets with a numeric port are also tried without it (`host`). Exec
        targets are also tried as their program, and as each command a known wrapper runs
        (`policy/argv.py`; those only for deny and ask). A `remembered` layer's allows are
        skipped when the act's default is deny. A write to a file the host runs
        (`builtin.HOST_EXECUTED`) asks, whatever allows it, unless an allow names it exactly.
        When no rule matches, the act's default decides and `rule`/`layer` are None.
        """
        act = Act(act)
        own, wrapped = _target_forms(act, target)
        lift_default = self.defaults.of(act) is not Effect.DENY
        for effect in _EVALUATION_ORDER:
            # What a wrapper runs can be denied or asked about, never allowed by its own name.
            forms = own if effect is Effect.ALLOW else own + wrapped
            for layer in self.layers:
                if effect is Effect.ALLOW and is_remembered(layer) and not lift_default:
                    continue  # a remembered answer never beats a default deny
                for rule in layer.rules:
                    if rule.act == act and rule.effect == effect and _matches(rule, forms):
                        verdict = Verdict(effect, rule.pattern, layer.name, layer.source)
                        return self._guarded(act, target, verdict)
        return self._guarded(act, target, Verdict(self.defaults.of(act)))

    def _guarded(self, act: Act, target: str, verdict: Verdict) -> Verdict:
        """A write to a file the host runs asks a person unless a rule names it exactly."""
        if act is not Act.WRITE or verdict.effect is Effect.DENY or self.is_permissive():
            return verdict  # permissive is the operator's explicit "enforce nothing"
        protected = host_executed(target)
        if protected is None:
            return verdict
        named = any(
            rule.act is Act.WRITE and rule.effect is Effect.ALLOW and rule.pattern == target
            for layer in self.layers
            for rule in layer.rules
        )
        if named and verdict.effect is Effect.ALLOW:
            return verdict
        pattern, does = protected
        return Verdict(Effect.ASK, f"{pattern} (the host runs it: {does})", HOST_EXECUTED_LAYER)

    def check(self, act: Act, target: str) -> Effect:
        """The effect of `act` on `target` (`explain(act, target).effect`)."""
        return self.explain(act, target).effect

    def is_permissive(self) -> bool:
        """Whether this policy enforces nothing: no rules and every default allow."""
        no_rules = all(not layer.rules for layer in self.layers)
        return no_rules and all(self.defaults.of(act) is Effect.ALLOW for act in Act)

    # -- composition -----------------------------------------------------------------------------

    def merge(self, other: Policy) -> Policy:
        """Combine peers: this policy's layers then `other`'s, the stricter default per act.

        Used for overlays of equal standing (config scopes, the `remembered` layer, the provider's
        net allow). `other`'s allows count, but still lose to any deny or ask of either side.
        """
        return Policy(self.layers + other.layers, self.defaults.stricter(other.defaults))

    def contain(self, child: Policy) -> Policy:
        """The policy of a child agent: inherit this one and let `child` only narrow it.

        The child's allow rules are dropped, its deny and ask rules kept, and each default is the
        stricter of the two, so the result is at least as strict as the parent for every act and
        target. Applied at every spawn, this holds at any depth: no descendant holds an allow (or
        even an ask) the root lacked.

        One departure from the reference harness: a child ask rule for an act whose combined
        default is deny becomes a deny rule. Kept as an ask it would outrank that default and
        turn "denied" into "approvable" for every target the parent denies only by default.
        """
        defaults = self.defaults.stricter(child.defaults)
        narrowed = tuple(_narrowed(layer, defaults) for layer in child.layers)
        return Policy(self.layers + narrowed, defaults)

    # -- serialization ---------------------------------------------------------------------------

    def to_dict(self) -> dict[str, object]:
        """The plain data shape shared by the JSON and TOML forms."""
        return _toml.render_data(self.layers, self.defaults)

    @classmethod
    def from_dict(cls, data: object, where: str = "policy") -> Policy:
        """Read the plain data shape (e.g. a `[policy]` table another loader already parsed).

        Raises:
            ConfigError: one line naming the bad key or value under `where`.
        """
        return cls(*_toml.parse_data(data, where))

    def to_json(self) -> str:
        """The JSON form, as stored with a run."""
        return _toml.render_json(self.layers, self.defaults)

    @classmethod
    def from_json(cls, text: str) -> Policy:
        """Read the JSON form.

        Raises:
            ConfigError: the text is not JSON or not a policy.
        """
        return cls(*_toml.parse_json(text))

    def to_toml(self) -> str:
        """The TOML form (`[policy.defaults]` and `[[policy.layers]]`); `from_toml` reads it back.

        Raises:
            ConfigError: a name or pattern holds text TOML cannot carry (a lone surrogate).
        """
        return _toml.render_toml(self.layers, self.defaults)

    @classmethod
    def from_toml(cls, text: str) -> Policy:
        """Read a TOML policy document (a `[policy]` table and nothing else).

        Raises:
            ConfigError: one line naming the bad key or value and its path.
        """
        return cls(*_toml.parse_toml(text))


def _narrowed(layer: Layer, defaults: Defaults) -> Layer:
    """A child's layer as it may stand under a parent (see `Policy.contain`)."""
    rules = tuple(
        Rule(rule.act, Effect.DENY, rule.pattern)
        if rule.effect is Effect.ASK and defaults.of(rule.act) is Effect.DENY
        else rule
        for rule in layer.rules
        if rule.effect is not Effect.ALLOW
    )
    return replace(layer, rules=rules)


def is_remembered(layer: Layer) -> bool:
    """Whether `layer` holds remembered answers (this run's, or a saved `*:remembered` layer)."""
    return layer.name == REMEMBERED or layer.name.endswith(f":{REMEMBERED}")


def _matches(rule: Rule, forms: tuple[str, ...]) -> bool:
    if glob_match_any(rule.pattern, forms):
        return True
    if rule.act not in (Act.READ, Act.WRITE):
        return False
    # `./infra/*`, `/infra/*`, `infra/`: also in the form targets take, never silently inert.
    meant = normalise_path_pattern(rule.pattern)
    return meant != rule.pattern and glob_match_any(meant, forms)


def _target_forms(act: Act, target: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The forms a target is tried in: its own, and (exec) those of the commands it wraps."""
    if act is Act.NET:
        found = _HOST_PORT.fullmatch(target)
        if found is not None:
            return (target, found.group(1)), ()
    if act is Act.EXEC:
        return exec_forms(target)
    return (target,), ()


# -- policy files ----------------------------------------------------------------------------------


def load_policy_file(path: str | os.PathLike[str]) -> Policy:
    """Read a TOML policy file.

    Raises:
        ConfigError: the file cannot be read or is not a policy; the message starts with the path.
    """
    file = Path(path)
    text = _read(file)
    try:
        return Policy.from_toml(text)
    except ConfigError as error:
        raise ConfigError(f"{file}: {error}") from None


def append_rules_to_file(
    path: str | os.PathLike[str], layer_name: str, rules: Iterable[Rule]
) -> Policy:
    """Save remembered rules to a policy file, keeping everything already in it.

    The rules go into a new `[[policy.layers]]` table named `layer_name`, appended as text so the
    file's comments and layout survive; rules already present in a layer of that name are skipped
    (nothing is written when none is new). A file written as inline arrays cannot be extended that
    way and is rewritten in the canonical form instead. A missing (or blank) file is created with
    the `Policy.default()` tiers and no other layer: it is an overlay, merged onto a base policy.

    Args:
        path: the policy file.
        layer_name: the layer to record the rules under (e.g. `remembered`).
        rules: the rules to add, in order.

    Returns:
        The policy the file now holds.

    Raises:
        ConfigError: the existing file is unreadable or invalid, or the file cannot be written.
    """
    file = Path(path)
    text = _read(file) if file.exists() else ""
    current = Policy() if not text.strip() else load_policy_file(file)
    present = {rule for layer in current.layers if layer.name == layer_name for rule in layer.rules}
    # dict.fromkeys drops repeats within `rules` too while keeping their order.
    new = tuple(dict.fromkeys(rule for rule in rules if rule not in present))
    if not new:
        return current
    added = Layer(layer_name, new)
    updated = current.with_layer(added)
    rendered = updated.to_toml()
    if text.strip():
        block = "\n".join(_toml.render_toml_layer(added, f"policy.layers[{len(current.layers)}]"))
        candidate = text + ("" if text.endswith("\n") else "\n") + "\n" + block + "\n"
        if _reads_as(candidate, updated):
            rendered = candidate
    _write_atomically(file, rendered)
    return updated


def _reads_as(text: str, expected: Policy) -> bool:
    try:
        return Policy.from_toml(text) == expected
    except ConfigError:
        return False


def _read(file: Path) -> str:
    try:
        return file.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise ConfigError(f"{file}: cannot read policy file: not UTF-8 ({error.reason})") from None
    except OSError as error:
        reason = error.strerror or str(error)
        raise ConfigError(f"{file}: cannot read policy file: {reason}") from None


def _write_atomically(file: Path, text: str) -> None:
    # Written beside the target and renamed over it, so a crash never leaves half a policy.
    temporary = file.with_name(f".{file.name}.{os.getpid()}.tmp")
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, file)
    except OSError as error:
        with contextlib.suppress(OSError):
            temporary.unlink(missing_ok=True)
        reason = error.strerror or str(error)
        raise ConfigError(f"{file}: cannot write policy file: {reason}") from None

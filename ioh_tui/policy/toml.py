"""The serialized forms of a policy: a plain data shape (JSON) and TOML, both strictly validated.

Both forms share one shape, `{"layers": [{"name", "rules": [{"act", "effect", "pattern"}]}],
"defaults": {"read", "write", "exec", "net", "mcp"}}`; TOML nests it under a `[policy]` table.
Reading is strict because a policy is a security boundary: an unknown key is far more likely a
typo that silently drops a deny (`patern = ".env"`) than an extension, so it is an error, reported
on one line that names the key path (`policy.layers[1].rules[0].effect`). TOML is written by hand
so the package needs nothing beyond the standard library, and reading it back gives the same policy.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Iterable, Mapping
from typing import Any

from ioh_tui.core.acts import Act, Effect
from ioh_tui.core.errors import ConfigError
from ioh_tui.policy.types import Defaults, Layer, Rule

__all__ = [
    "Parsed",
    "parse_data",
    "parse_json",
    "parse_toml",
    "render_data",
    "render_json",
    "render_toml",
    "render_toml_layer",
]

Parsed = tuple[tuple[Layer, ...], Defaults]
"""A policy's parts: its layers in order and its defaults."""

_ACTS = tuple(act.value for act in Act)
_EFFECTS = tuple(effect.value for effect in Effect)
_RULE_KEYS = ("act", "effect", "pattern")
_LAYER_KEYS = ("name", "rules")
_STORED_LAYER_KEYS = (*_LAYER_KEYS, "source")
_POLICY_KEYS = ("layers", "defaults")


# -- reading -----------------------------------------------------------------------------------


def parse_toml(text: str) -> Parsed:
    """Read a policy document: a `[policy]` table and nothing else.

    Raises:
        ConfigError: the text is not TOML or does not describe a policy.
    """
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"policy TOML: {error}") from None
    except RecursionError:
        raise ConfigError("policy TOML: nested too deeply") from None
    _only_keys(document, ("policy",), "policy TOML")
    if "policy" not in document:
        raise ConfigError("policy TOML: missing the [policy] table")
    return parse_data(document["policy"], "policy")


def parse_json(text: str) -> Parsed:
    """Read the JSON form (as stored with a run).

    Raises:
        ConfigError: the text is not JSON or does not describe a policy.
    """
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise ConfigError(f"policy JSON: {error}") from None
    except RecursionError:
        raise ConfigError("policy JSON: nested too deeply") from None
    return parse_data(data, "policy", stored=True)


def parse_data(data: object, where: str = "policy", *, stored: bool = False) -> Parsed:
    """Validate the plain data shape of a policy (a parsed `[policy]` table or JSON object).

    A missing `layers` means none; a missing `defaults` table or key means that act's
    `Policy.default()` tier (so a missing `net` means deny).

    Args:
        data: the parsed value.
        where: the key path of `data`, used in error messages.
        stored: the form stored with a run, whose layers may name the file they came from.

    Raises:
        ConfigError: naming the first bad key or value and its path.
    """
    table = _table(data, where)
    _only_keys(table, _POLICY_KEYS, where)
    layers_data = _array(table.get("layers", []), f"{where}.layers")
    layers = tuple(
        _parse_layer(item, f"{where}.layers[{index}]", stored)
        for index, item in enumerate(layers_data)
    )
    defaults = _parse_defaults(table.get("defaults", {}), f"{where}.defaults")
    return layers, defaults


def _parse_defaults(data: object, where: str) -> Defaults:
    table = _table(data, where)
    _only_keys(table, _ACTS, where)
    defaults = Defaults()
    for key, value in table.items():
        act = Act(key)
        defaults = defaults.with_effect(act, Effect(_choice(value, _EFFECTS, f"{where}.{key}")))
    return defaults


def _parse_layer(data: object, where: str, stored: bool) -> Layer:
    table = _table(data, where)
    _only_keys(table, _STORED_LAYER_KEYS if stored else _LAYER_KEYS, where)
    _require(table, ("name",), where)
    name = _string(table["name"], f"{where}.name")
    rules_data = _array(table.get("rules", []), f"{where}.rules")
    rules = tuple(
        _parse_rule(item, f"{where}.rules[{index}]") for index, item in enumerate(rules_data)
    )
    # `source` is kept in a run's stored policy (JSON) so a resumed run still names the file a
    # rule came from; a file's own layers are given their source by whoever reads the file.
    source = _string(table["source"], f"{where}.source") if "source" in table else None
    return Layer(name, rules, source)


def _parse_rule(data: object, where: str) -> Rule:
    table = _table(data, where)
    _only_keys(table, _RULE_KEYS, where)
    _require(table, _RULE_KEYS, where)
    return Rule(
        act=Act(_choice(table["act"], _ACTS, f"{where}.act")),
        effect=Effect(_choice(table["effect"], _EFFECTS, f"{where}.effect")),
        pattern=_string(table["pattern"], f"{where}.pattern"),
    )


def _table(value: object, where: str) -> Mapping[str, Any]:
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: expected a table, got {_kind(value)}")
    return value


def _array(value: object, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise ConfigError(f"{where}: expected an array of tables, got {_kind(value)}")
    return value


def _string(value: object, where: str) -> str:
    if not isinstance(value, str):
        raise ConfigError(f"{where}: expected a string, got {_kind(value)}")
    return value


def _choice(value: object, choices: tuple[str, ...], where: str) -> str:
    text = _string(value, where)
    if text not in choices:
        raise ConfigError(f"{where}: {text!r} is not one of {', '.join(choices)}")
    return text


def _only_keys(table: Mapping[str, Any], allowed: tuple[str, ...], where: str) -> None:
    for key in table:
        if key not in allowed:
            raise ConfigError(f"{where}: unknown key {key!r} (expected {', '.join(allowed)})")


def _require(table: Mapping[str, Any], keys: tuple[str, ...], where: str) -> None:
    for key in keys:
        if key not in table:
            raise ConfigError(f"{where}: missing key {key!r}")


def _kind(value: object) -> str:
    """The TOML/JSON word for a value's type, so messages speak the user's language."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return f"an integer ({value})"
    if isinstance(value, float):
        return f"a float ({value})"
    if isinstance(value, str):
        return f"a string ({value!r})"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "a table"
    return f"a {type(value).__name__}"


# -- writing -----------------------------------------------------------------------------------


def render_data(layers: tuple[Layer, ...], defaults: Defaults) -> dict[str, Any]:
    """The plain data shape (what `parse_data` reads)."""
    return {
        "layers": [
            {
                "name": layer.name,
                "rules": [
                    {"act": r.act.value, "effect": r.effect.value, "pattern": r.pattern}
                    for r in layer.rules
                ],
                **({"source": layer.source} if layer.source else {}),
            }
            for layer in layers
        ],
        "defaults": {act.value: defaults.of(act).value for act in Act},
    }


def render_json(layers: tuple[Layer, ...], defaults: Defaults) -> str:
    """The JSON form, ASCII-only so any text (even an undecodable file name) survives storage."""
    return json.dumps(render_data(layers, defaults), separators=(",", ":"))


def render_toml(
    layers: tuple[Layer, ...], defaults: Defaults, acts: Iterable[Act] = tuple(Act)
) -> str:
    """The TOML document: `[policy.defaults]` then one `[[policy.layers]]` per layer.

    Args:
        layers: the layers, in order.
        defaults: the default effects.
        acts: the acts whose defaults are written (a contract writes only those it names).

    Raises:
        ConfigError: a name or pattern holds text TOML cannot carry (a lone surrogate).
    """
    lines = ["[policy.defaults]"]
    lines += [f'{act.value} = "{defaults.of(act).value}"' for act in acts]
    for index, layer in enumerate(layers):
        lines += ["", *render_toml_layer(layer, f"policy.layers[{index}]")]
    return "\n".join(lines) + "\n"


def render_toml_layer(layer: Layer, where: str) -> list[str]:
    """The lines of one `[[policy.layers]]` table (used to append a layer to a file as text)."""
    lines = ["[[policy.layers]]", f"name = {_toml_string(layer.name, f'{where}.name')}"]
    if not layer.rules:
        return [*lines, "rules = []"]
    lines.append("rules = [")
    for index, rule in enumerate(layer.rules):
        pattern = _toml_string(rule.pattern, f"{where}.rules[{index}].pattern")
        fields = f'act = "{rule.act.value}", effect = "{rule.effect.value}", pattern = {pattern}'
        lines.append(f"  {{ {fields} }},")
    return [*lines, "]"]


_SHORT_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\t": "\\t",
    "\n": "\\n",
    "\f": "\\f",
    "\r": "\\r",
}


def _toml_string(text: str, where: str) -> str:
    """A TOML basic string holding exactly `text`."""
    out = ['"']
    for char in text:
        code = ord(char)
        if char in _SHORT_ESCAPES:
            out.append(_SHORT_ESCAPES[char])
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\u{code:04X}")
        elif 0xD800 <= code <= 0xDFFF:
            # TOML text is UTF-8 and its \u escapes must be scalar values: no way to say this.
            raise ConfigError(f"{where}: {text!r} cannot be written as TOML (a lone surrogate)")
        else:
            out.append(char)
    out.append('"')
    return "".join(out)

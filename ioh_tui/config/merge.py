"""The effective configuration, each value with where it came from.

Flags, then the environment, then the project file, then the user's, then the defaults.

A `--profile NAME` puts the profile's provider keys just under the flags (choosing a profile is a
flag): flags > profile > environment > project > user > default. A profile may be defined in either
file; the project's definition of a name wins over the user's.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ioh_tui.config.loading import FileLayer, load_file, load_rules
from ioh_tui.config.locations import project_file, project_rules_file, user_file, user_rules_file
from ioh_tui.config.schema import KEYS, PROVIDER_KEYS, Invalid, Key, looks_secret
from ioh_tui.core.errors import ConfigError

if TYPE_CHECKING:
    # Imported where a policy is stacked: reading the configuration (as `ioh-tui` does before the
    # app's first frame) loads no policy unless a file holds one.
    from ioh_tui.policy.stack import FilePolicy

_MODEL_ENV = {
    "openai": "OPENAI_MODEL",
    "compatible": "OPENAI_MODEL",
    "anthropic": "ANTHROPIC_MODEL",
    "openrouter": "OPENROUTER_MODEL",
}
"""The variable each provider has always read its model from."""


@dataclass(frozen=True, slots=True)
class Value:
    """A key's effective value and its source (`flag --x`, `env NAME`, `project PATH:LINE`, ...)."""

    value: Any
    source: str


@dataclass(frozen=True, slots=True)
class Config:
    """The effective configuration of one command."""

    values: dict[str, Value]
    """Every key of `schema.KEYS` by `section.key`."""
    files: tuple[tuple[str, Path, bool], ...]
    """(scope, path, exists) of each file read, user first."""
    layers: tuple[FileLayer, ...] = ()
    """The files that exist, user first."""
    profile: str | None = None
    rules: tuple[FileLayer, ...] = ()
    """The files of remembered rules that exist (`policy.toml`), user first: `policy` only."""
    left_out: tuple[tuple[str, Path], ...] = ()
    """Project sections left out because the user has not agreed to them: (kind, file)."""
    resolve: Callable[[tuple[FileLayer, ...]], dict[str, Value]] | None = field(
        default=None, repr=False, compare=False
    )
    """Every key resolved again over other layers, under the same flags, environment and
    profile (a project's left-out provider keys). Hidden from `repr`: it holds the environment."""

    def get(self, path: str) -> Any:
        """The value of `section.key` (None: the built-in behaviour)."""
        return self.values[path].value

    def given(self, path: str) -> Any:
        """The value of `section.key` when something set it, else None (the caller's default)."""
        value = self.values[path]
        return None if value.source == "default" else value.value

    def policy_layers(self) -> tuple[tuple[str, Path, dict[str, Any]], ...]:
        """The `[policy]` table of each file that has one: (scope, path, table), user first.

        Each table is in the policy TOML's shape (`layers`, `defaults`), already checked.
        """
        return tuple(
            (layer.scope, layer.path, layer.policy)
            for layer in self.layers
            if layer.policy is not None
        )

    def policy_files(self) -> tuple[FilePolicy, ...]:
        """Every policy read from a file, in stacking order.

        The user's configuration, the user's remembered rules, the project's configuration, the
        project's remembered rules.
        """
        from ioh_tui.policy.stack import FilePolicy

        files: list[FilePolicy] = []
        for scope in ("user", "project"):
            files += [
                FilePolicy(layer.scope, layer.path, layer.policy)
                for layer in self.layers
                if layer.scope == scope and layer.policy is not None
            ]
            files += [
                FilePolicy(layer.scope, layer.path, layer.policy, rules_only=True)
                for layer in self.rules
                if layer.scope == scope and layer.policy is not None
            ]
        return tuple(files)

    def mcp_servers(self) -> dict[str, dict[str, Any]]:
        """`[mcp.servers.NAME]` from both files (the project's definition of a name wins)."""
        servers: dict[str, dict[str, Any]] = {}
        for layer in self.layers:
            servers.update(layer.mcp.get("servers", {}))
        return servers

    def hooks(self) -> dict[str, list[dict[str, Any]]]:
        """`[[hooks.EVENT]]` entries from both files, the user's first."""
        out: dict[str, list[dict[str, Any]]] = {}
        for layer in self.layers:
            for event, entries in layer.hooks.items():
                out.setdefault(event, []).extend(entries)
        return out


def load_config(
    flags: Mapping[str, Any] | None = None,
    *,
    workspace: Path | None = None,
    profile: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> Config:
    """Read the user and project files and resolve every key.

    Args:
        flags: option values by their attribute name (`max_steps`, ...); None means not given.
        workspace: where the project file is looked for (default: the current directory).
        profile: a `[profiles.NAME]` to apply.
        environ: the environment (default: `os.environ`).

    Raises:
        ConfigError: a bad file, a bad variable, or an unknown profile (one line).
    """
    flags = flags or {}
    env = os.environ if environ is None else environ
    user_path = user_file()
    root = (workspace or Path.cwd()).resolve()
    project_path = project_file(root)
    user = load_file(user_path, "user")
    project = load_file(project_path, "project") if project_path != user_path else None
    user_rules = load_rules(user_rules_file(), "user")
    project_rules = (
        load_rules(project_rules_file(root), "project")
        if project_rules_file(root) != user_rules_file()
        else None
    )
    layers = tuple(layer for layer in (user, project) if layer is not None)

    def resolve(over: tuple[FileLayer, ...]) -> dict[str, Value]:
        chosen = _profile(profile, over)
        values: dict[str, Value] = {}
        for key in KEYS:
            values[key.path] = _resolve(key, flags, env, over, chosen, values)
        return values

    files = (
        ("user", user_path, user is not None),
        ("project", project_path, project is not None),
    )
    rules = tuple(layer for layer in (user_rules, project_rules) if layer is not None)
    return Config(resolve(layers), files, layers, profile, rules, resolve=resolve)


def _profile(
    name: str | None, layers: tuple[FileLayer, ...]
) -> tuple[str, FileLayer, dict[str, Any]] | None:
    if name is None:
        return None
    for layer in reversed(layers):
        if name in layer.profiles:
            return name, layer, layer.profiles[name]
    defined = sorted({p for layer in layers for p in layer.profiles})
    known = f" (defined: {', '.join(defined)})" if defined else " (no profile is defined)"
    raise ConfigError(f"--profile {name}: no [profiles.{name}] in the configuration files{known}")


def _resolve(
    key: Key,
    flags: Mapping[str, Any],
    env: Mapping[str, str],
    layers: tuple[FileLayer, ...],
    profile: tuple[str, FileLayer, dict[str, Any]] | None,
    resolved: dict[str, Value],
) -> Value:
    if key.dest is not None and flags.get(key.dest) is not None:
        flag = flags[key.dest]
        return Value(flag, f"flag {key.flag}")
    if profile is not None and key in PROVIDER_KEYS:
        name, layer, table = profile
        setting = table.get(key.name)
        if setting is not None:
            return Value(setting.value, f"profile {name} ({layer.where(setting.line)})")
    for var in _env_names(key, resolved):
        raw = env.get(var)
        if raw:
            return Value(_from_env(key, var, raw), f"env {var}")
    for layer in reversed(layers):
        found = layer.values.get(key.path)
        if found is not None:
            return Value(found.value, layer.where(found.line))
    return Value(key.default, "default")


def _env_names(key: Key, resolved: dict[str, Value]) -> tuple[str, ...]:
    names = key.env_names
    provider = resolved.get("provider.name")
    name = provider.value if provider is not None else None
    if key.path == "provider.model" and name in _MODEL_ENV:
        names = (*names, _MODEL_ENV[name])
    if key.path == "provider.base_url" and name == "compatible":
        names = (*names, "OPENAI_BASE_URL")
    return names


def _from_env(key: Key, var: str, raw: str) -> Any:
    """A variable's text as the key's type (a number key parses the text as TOML would)."""
    value: Any = raw
    probe = key.check
    for convert in (int, float):
        try:
            value = convert(raw)
            break
        except ValueError:
            continue
    try:
        checked = probe(value)
    except Invalid:
        try:
            checked = probe(raw)
        except Invalid as exc:
            shown = "<hidden: it looks like a key>" if looks_secret(raw) else repr(raw)
            raise ConfigError(f"{var}={shown}: {exc}") from None
    if key.relative and isinstance(checked, str):
        checked = str(Path(checked).expanduser().resolve())
    return checked

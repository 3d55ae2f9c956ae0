"""Reading one configuration file: TOML by `tomllib`, every key checked, each with its line.

Any problem is one `ConfigError` line, `FILE:LINE: KEY: REASON` (exit 2 on the command line).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ioh_tui.config.lines import key_lines, line_of
from ioh_tui.config.schema import BY_PATH, FREE_SECTIONS, Invalid
from ioh_tui.config.shapes import (
    Report,
    check_hooks,
    check_mcp,
    check_policy,
    check_profiles,
    refuse_key_values,
)
from ioh_tui.core.errors import ConfigError

Scope = Literal["user", "project"]


@dataclass(frozen=True, slots=True)
class Setting:
    """A value read from a file, and the line it is written on."""

    value: Any
    line: int


@dataclass(frozen=True, slots=True)
class FileLayer:
    """One configuration file, checked."""

    scope: Scope
    path: Path
    values: dict[str, Setting] = field(default_factory=dict)
    """Scalar keys by `section.key`."""
    profiles: dict[str, dict[str, Setting]] = field(default_factory=dict)
    """`[profiles.NAME]` tables: provider keys (`name`, `model`, ...) by profile."""
    policy: dict[str, Any] | None = None
    """The `[policy]` table (layers and defaults), as the policy TOML reads it."""
    policy_line: int | None = None
    mcp: dict[str, Any] = field(default_factory=dict)
    hooks: dict[str, Any] = field(default_factory=dict)

    def where(self, line: int | None) -> str:
        """`scope path:line`, as `ioh-tui config` names a source."""
        return f"{self.scope} {self.path}:{line}" if line else f"{self.scope} {self.path}"


def load_file(path: Path, scope: Scope) -> FileLayer | None:
    """The file at `path` checked, or None when there is none.

    Raises:
        ConfigError: unreadable, not TOML, an unknown key, a wrong type, an invalid value, or a
            key's value written in the file (one line naming the file, the line and the key).
    """
    read = _read_toml(path, "the configuration")
    if read is None:
        return None
    text, data = read
    lines = key_lines(text)

    def report(key: tuple[str, ...], reason: str) -> ConfigError:
        line = line_of(lines, key)
        shown = ".".join(part if not part.startswith("#") else f"[{part[1:]}]" for part in key)
        shown = shown.replace(".[", "[")
        return ConfigError(f"{path}:{line or 1}: {shown}: {reason}")

    refuse_key_values(data, (), report)
    values = _scalars(data, path, lines, report)
    if scope == "project":
        _no_store_in_project(values, report)
    profiles: dict[str, dict[str, Setting]] = {}
    if "profiles" in data:
        for name, table in check_profiles(data["profiles"], report).items():
            profiles[name] = {
                key: Setting(value, line_of(lines, ("profiles", name, key)) or 1)
                for key, value in table.items()
            }
    return FileLayer(
        scope,
        path,
        values,
        profiles,
        check_policy(data["policy"], report) if "policy" in data else None,
        line_of(lines, ("policy",)),
        check_mcp(data["mcp"], report) if "mcp" in data else {},
        check_hooks(data["hooks"], report) if "hooks" in data else {},
    )


def load_rules(path: Path, scope: Scope) -> FileLayer | None:
    """A file of remembered rules (a policy TOML document), or None when there is none.

    Raises:
        ConfigError: unreadable, not TOML, or not a policy (one line naming the file).
    """
    read = _read_toml(path, "the remembered rules")
    if read is None:
        return None
    # Only for a file there: with none, reading the configuration loads no policy (issue 23).
    from ioh_tui.policy.toml import parse_data

    text, data = read
    table = data.get("policy", {})
    if set(data) - {"policy"}:
        raise ConfigError(f"{path}: only a [policy] table belongs in a file of remembered rules")
    try:
        parse_data(table, "policy")
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    return FileLayer(scope, path, policy=table, policy_line=key_lines(text).get(("policy",)))


def _read_toml(path: Path, what: str) -> tuple[str, dict[str, Any]] | None:
    """The file's text and its TOML, or None when there is no file.

    Raises:
        ConfigError: unreadable or not TOML (one line naming the file).
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read {what}: {exc}") from None
    try:
        return text, tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None


def _scalars(
    data: dict[str, Any], path: Path, lines: dict[tuple[str, ...], int], report: Report
) -> dict[str, Setting]:
    """The keys of `schema.KEYS` in `data`, checked (relative paths made absolute)."""
    values: dict[str, Setting] = {}
    for section, table in data.items():
        if section in FREE_SECTIONS:
            continue
        if not isinstance(table, dict):
            raise report((section,), _unknown_section(section, table))
        refuse_key_values(table, (section,), report)
        for key, value in table.items():
            spec = BY_PATH.get(f"{section}.{key}")
            if spec is None:
                raise report((section, key), _unknown_key(section))
            try:
                checked = spec.check(value)
            except Invalid as exc:
                raise report((section, key), str(exc)) from None
            if spec.relative and isinstance(checked, str):
                checked = str((path.parent / Path(checked).expanduser()).resolve())
            values[spec.path] = Setting(checked, line_of(lines, (section, key)) or 1)
    return values


def _no_store_in_project(values: dict[str, Setting], report: Report) -> None:
    """Refuse what a project (which may be hostile) may not choose.

    Where every run of the user is recorded, running commands with no containment, and which
    user commands run as under a root harness (`root` would hand them every root-only file).
    """
    if "store.path" in values:
        raise report(("store", "path"), "only the user file or --store may move the store")
    backend = values.get("sandbox.backend")
    if backend is not None and backend.value == "none":
        raise report(
            ("sandbox", "backend"),
            "a project file cannot turn containment off (only --sandbox none)",
        )
    if "sandbox.root_user" in values:
        raise report(
            ("sandbox", "root_user"),
            "only the user file or IOH_TUI_SANDBOX_ROOT_USER may choose who commands run as",
        )


def _unknown_section(section: str, value: Any) -> str:
    sections = sorted({key.section for key in BY_PATH.values()} | set(FREE_SECTIONS))
    if not isinstance(value, dict) and section in {k.section for k in BY_PATH.values()}:
        return "must be a table"
    return f"unknown key (sections: {', '.join(sections)})"


def _unknown_key(section: str) -> str:
    known = sorted(key.name for key in BY_PATH.values() if key.section == section)
    if not known:
        return _unknown_section(section, {})
    return f"unknown key (allowed in [{section}]: {', '.join(known)})"

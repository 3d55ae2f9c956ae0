"""Which parts of a project's own files the user has agreed to use.

A repository can carry `.ioh-tui/config.toml`: a `[policy]` that widens what the agent may do,
hooks (commands run at every tool call), MCP servers (commands started with the run) and the
provider's endpoint or key variable (which would send the user's key, or another variable's
value, to a server of the project's choosing). A cloned repository can be hostile, so none of
these is used before the user has seen it once and agreed.

The agreement is kept in the user's data directory, never in the project (whose author could
pre-agree for the user), keyed by the workspace's real path, the kind of section and a digest of
exactly what was shown: a section that changes afterwards is shown again.

Callers: the app shows an untrusted section and records the answer; `exec` (no one to ask) leaves
untrusted sections out with one line on stderr unless `--trust-project` was given.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import ipaddress
import json
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ioh_tui.config.loading import FileLayer
from ioh_tui.config.merge import Config
from ioh_tui.core.errors import ConfigError
from ioh_tui.paths import data_dir

TRUST_FILE = "trusted-projects.json"
_VERSION = 1


def digest(body: Any) -> str:
    """A stable digest of a section as parsed from TOML (key order does not matter)."""
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


class TrustBook:
    """The user's record of agreed project sections (`<data dir>/trusted-projects.json`)."""

    def __init__(self, path: Path | None = None) -> None:
        """Use `path`, else the data directory's file (read every time: others write it)."""
        self.path = path if path is not None else data_dir() / TRUST_FILE

    def trusted(self, workspace: Path, kind: str, body: Any) -> bool:
        """Whether the user agreed to exactly `body` as the workspace's `kind` section.

        `kind` names the section: `policy`, `hooks`, `mcp:NAME` (one per server).
        """
        entry = self._read().get(_key(workspace), {})
        return bool(entry.get(kind) == digest(body))

    def trust(self, workspace: Path, kind: str, body: Any) -> None:
        """Record the user's agreement to `body` (replacing an older agreement of that kind)."""
        with self._locked():
            projects = self._read()
            projects.setdefault(_key(workspace), {})[kind] = digest(body)
            self._write(projects)

    def untrusted(self, workspace: Path, sections: Mapping[str, Any]) -> list[str]:
        """The kinds among `sections` (kind -> body) not yet agreed to, in the given order."""
        projects = self._read().get(_key(workspace), {})
        return [kind for kind, body in sections.items() if projects.get(kind) != digest(body)]

    def _read(self) -> dict[str, dict[str, str]]:
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            raise ConfigError(f"{self.path}: not a readable trust file ({exc})") from None
        projects = raw.get("projects") if isinstance(raw, dict) else None
        if not isinstance(projects, dict):
            raise ConfigError(f"{self.path}: not a trust file (no 'projects' table)")
        return {
            str(ws): {str(k): str(v) for k, v in kinds.items()}
            for ws, kinds in projects.items()
            if isinstance(kinds, dict)
        }

    def _write(self, projects: dict[str, dict[str, str]]) -> None:
        # Written whole to a sibling and renamed: a reader never sees half a file.
        text = json.dumps({"version": _VERSION, "projects": projects}, indent=1, sort_keys=True)
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text + "\n")
        os.replace(tmp, self.path)

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        # Two processes agreeing at once must not lose one another's entry.
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(
                self.path.with_name(f".{self.path.name}.lock"), os.O_CREAT | os.O_RDWR, 0o600
            )
        except OSError as exc:
            raise ConfigError(f"{self.path}: cannot record the agreement ({exc})") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)


def project_sections(config: Config) -> dict[str, Any]:
    """The project's sections that need the user's agreement, kind -> body.

    Kinds: `policy` (its `[policy]` table, only when it widens: any rule but a deny, or a default
    looser than its tier; a deny-only policy narrows and applies unasked), `hooks` (all its
    hooks), `mcp:NAME` (each server), `provider` (`base_url` and `api_key_env` of `[provider]`
    and of its profiles, where `base_url` is off this machine: where the key goes and which
    variable is sent), `rules` (the project's
    `.ioh-tui/policy.toml` when it holds anything but denies: it comes with a cloned repository
    as easily as the configuration does).
    """
    sections: dict[str, Any] = {}
    for layer in config.layers:
        if layer.scope != "project":
            continue
        if layer.policy is not None and _widens(layer.policy):
            sections["policy"] = layer.policy
        if layer.hooks:
            sections["hooks"] = layer.hooks
        for name, server in layer.mcp.get("servers", {}).items():
            sections[f"mcp:{name}"] = server
        endpoint = _endpoint(layer)
        if endpoint:
            sections["provider"] = endpoint
    for layer in config.rules:
        if (
            layer.scope == "project"
            and layer.policy is not None
            and _widens(layer.policy, rules_only=True)
        ):
            sections["rules"] = layer.policy
    return sections


ENDPOINT_KEYS = ("base_url", "api_key_env")
"""The provider keys a project needs agreement for when it names a server off this machine:
where requests (and the key) go, and which variable's value is sent as the key. A server on
loopback (or a local preset) is used unasked, as are the model and the provider's name: a
project cannot listen there without running code, which its hooks and servers need agreement
for."""


def _endpoint(layer: FileLayer) -> dict[str, Any]:
    """A project file's remote endpoints, as written.

    Its `provider` and `profiles.NAME` tables that name a `base_url` off this machine, with
    their `api_key_env`.
    """
    found: dict[str, Any] = {}
    provider = {key: layer.values[f"provider.{key}"].value for key in _provider_endpoint(layer)}
    if provider:
        found["provider"] = provider
    profiles = {
        name: {key: table[key].value for key in ENDPOINT_KEYS if key in table}
        for name, table in layer.profiles.items()
        if _remote(table.get("base_url"))
    }
    if profiles:
        found["profiles"] = profiles
    return found


def _provider_endpoint(layer: FileLayer) -> list[str]:
    """The endpoint keys `[provider]` sets, when its `base_url` is remote (else none)."""
    if not _remote(layer.values.get("provider.base_url")):
        return []
    return [key for key in ENDPOINT_KEYS if f"provider.{key}" in layer.values]


def _remote(setting: Any) -> bool:
    """Whether a `base_url` setting names a server off this machine.

    The rule of `providers.base.is_loopback`, written again: that module loads httpx, and the
    configuration is read before the app's first frame without it (issue 23).
    """
    if setting is None:
        return False
    text = str(getattr(setting, "value", setting))
    if "://" not in text:
        return False  # a compatible preset's name (ollama, vllm, ...): a server on this machine
    host = (urlsplit(text).hostname or "").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return False
    try:
        return not ipaddress.ip_address(host).is_loopback
    except ValueError:
        return True


def _without_endpoint(layer: FileLayer) -> FileLayer:
    dropped = {f"provider.{key}" for key in _provider_endpoint(layer)}
    return replace(
        layer,
        values={path: setting for path, setting in layer.values.items() if path not in dropped},
        profiles={
            name: (
                {key: s for key, s in table.items() if key not in ENDPOINT_KEYS}
                if _remote(table.get("base_url"))
                else table
            )
            for name, table in layer.profiles.items()
        },
    )


def _widens(table: Mapping[str, Any], *, rules_only: bool = False) -> bool:
    """`policy.stack.table_widens`, imported only for a project that has a policy.

    `ioh-tui` reads the configuration before the app's first frame: without a project policy
    that loads no part of the policy package (issue 23).
    """
    from ioh_tui.policy.stack import table_widens

    return table_widens(table, rules_only=rules_only)


def section_file(config: Config, kind: str) -> Path:
    """The file a section of `kind` is written in (the project's configuration or its rules)."""
    scope = "project"
    files = config.rules if kind == "rules" else config.layers
    return next(layer.path for layer in files if layer.scope == scope)


def section_title(kind: str) -> str:
    """How a section is named to a person: `[policy]`, `[hooks]`, `[mcp.servers.NAME]`, rules."""
    if kind.startswith("mcp:"):
        return f"[mcp.servers.{kind[4:]}]"
    if kind == "rules":
        return "its remembered rules"
    if kind == "provider":
        return "the provider's base_url and api_key_env"
    return f"[{kind}]"


def section_risk(kind: str) -> str:
    """Why a section of `kind` waits for the user's agreement, as one clause."""
    if kind == "provider":
        return "it chooses where requests and your key are sent"
    return "it can widen what the agent may do or run commands"


def keep_trusted(
    config: Config, workspace: Path, book: TrustBook, *, agreed: Iterable[str] = ()
) -> tuple[Config, list[str]]:
    """`config` without the project sections the user has not agreed to, and those left out.

    The result's `left_out` names each section left out and its file.

    Args:
        config: the effective configuration.
        workspace: the project.
        book: the user's record of agreements.
        agreed: kinds to keep though unrecorded (`--trust-project` passes every kind).
    """
    sections = project_sections(config)
    keep = set(agreed)
    out = [kind for kind in book.untrusted(workspace, sections) if kind not in keep]
    if not out:
        return config, []
    left_out = tuple((kind, section_file(config, kind)) for kind in out)
    layers = []
    for layer in config.layers:
        if layer.scope == "project":
            servers = {
                name: server
                for name, server in layer.mcp.get("servers", {}).items()
                if f"mcp:{name}" not in out
            }
            layer = replace(
                layer,
                policy=None if "policy" in out else layer.policy,
                hooks={} if "hooks" in out else layer.hooks,
                mcp={**layer.mcp, "servers": servers} if layer.mcp else layer.mcp,
            )
            if "provider" in out:
                layer = _without_endpoint(layer)
        layers.append(layer)
    rules = tuple(
        layer for layer in config.rules if not (layer.scope == "project" and "rules" in out)
    )
    values = config.values
    if "provider" in out and config.resolve is not None:
        # The keys fall to what the flags, the environment and the user's file give.
        values = config.resolve(tuple(layers))
    filtered = replace(config, values=values, layers=tuple(layers), rules=rules, left_out=left_out)
    return filtered, out


def trust_all(config: Config, workspace: Path, book: TrustBook) -> list[str]:
    """Record the user's agreement to every project section as it is now (`--trust-project`)."""
    sections = project_sections(config)
    for kind in book.untrusted(workspace, sections):
        book.trust(workspace, kind, sections[kind])
    return list(sections)


def _key(workspace: Path) -> str:
    return os.path.realpath(workspace)

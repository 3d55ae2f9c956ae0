"""The sections with shapes of their own: profiles, policy, MCP servers, hooks.

`[policy]` is read as a policy (the policy TOML's `layers` and `defaults`) and kept for the layers
to stack; MCP servers and hooks are checked for shape only (what runs them comes later), so a
malformed one is an error now rather than a surprise then.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

from ioh_tui.config.schema import PROVIDER_KEYS, Invalid, env_name, looks_secret
from ioh_tui.core.errors import ConfigError

Report = Callable[[tuple[str, ...], str], ConfigError]
"""Builds the one-line error for a key path and a reason (the caller knows file and line)."""

HOOK_EVENTS = ("pre_tool", "post_tool", "stop", "notification")
_SERVER_KEYS = ("command", "args", "env", "cwd", "url", "headers_env", "transport")
_HOOK_KEYS = ("match", "command", "timeout_s")
HOOK_MAX_TIMEOUT_S = 600
"""A hook holds up the call it runs at: ten minutes is the longest a file may ask for."""
PROFILE_KEYS = {key.name: key for key in PROVIDER_KEYS}
_SERVER_NAME = re.compile(r"[A-Za-z0-9-]{1,32}|(?=.{1,32}$)[A-Za-z0-9-]+(?:_[A-Za-z0-9-]+)+")
"""A server name prefixes its tools' names (`mcp__NAME__TOOL`, which providers limit to
letters, digits, `_` and `-`): at most 32 of those, and no `__`, which would split ambiguously."""
_HEADER = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
"""An HTTP header name (RFC 9110 token)."""


def _table(value: Any, path: tuple[str, ...], report: Report) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise report(path, "must be a table")
    return value


def _unknown(
    table: dict[str, Any], allowed: tuple[str, ...], path: tuple[str, ...], report: Report
) -> None:
    for key in table:
        if key not in allowed:
            raise report((*path, key), f"unknown key (allowed: {', '.join(allowed)})")


def check_profiles(data: Any, report: Report) -> dict[str, dict[str, Any]]:
    """`[profiles.NAME]` tables: each holds provider keys only."""
    profiles: dict[str, dict[str, Any]] = {}
    for name, raw in _table(data, ("profiles",), report).items():
        path = ("profiles", name)
        table = _table(raw, path, report)
        refuse_key_values(table, path, report)
        _unknown(table, tuple(PROFILE_KEYS), path, report)
        checked: dict[str, Any] = {}
        for key, value in table.items():
            try:
                checked[key] = PROFILE_KEYS[key].check(value)
            except Invalid as exc:
                raise report((*path, key), str(exc)) from None
        profiles[name] = checked
    return profiles


def check_policy(data: Any, report: Report) -> dict[str, Any]:
    """A `[policy]` table, read as the policy TOML reads one (the message names the key)."""
    from ioh_tui.policy import Policy

    table = _table(data, ("policy",), report)
    try:
        Policy.from_dict(table, "policy")
    except ConfigError as exc:
        text = str(exc)
        where, _, reason = text.partition(": ")
        path = tuple(part for part in where.replace("[", ".#").replace("]", "").split(".") if part)
        raise report(path or ("policy",), reason or text) from None
    return table


def check_mcp(data: Any, report: Report) -> dict[str, Any]:
    """`[mcp.servers.NAME]`: `command` (+ `args`, `env`, `cwd`) or `url` (+ `headers_env`, ...)."""
    table = _table(data, ("mcp",), report)
    _unknown(table, ("servers",), ("mcp",), report)
    servers = _table(table.get("servers", {}), ("mcp", "servers"), report)
    for name, raw in servers.items():
        path = ("mcp", "servers", name)
        if not _SERVER_NAME.fullmatch(name):
            raise report(
                path,
                "a server name is at most 32 letters, digits, '-' and single '_' (it prefixes "
                "its tools' names: mcp__NAME__TOOL)",
            )
        server = _table(raw, path, report)
        refuse_key_values(server, path, report)
        _unknown(server, _SERVER_KEYS, path, report)
        if ("command" in server) == ("url" in server):
            raise report(
                path, "needs exactly one of command (a local server) or url (a remote one)"
            )
        for key in ("command", "cwd", "url"):
            if key in server and (not isinstance(server[key], str) or not server[key]):
                raise report((*path, key), "must be a non-empty string")
        if "transport" in server and "url" not in server:
            raise report((*path, "transport"), "goes with url (a local server speaks stdio)")
        if server.get("transport", "http") not in ("http", "sse"):
            raise report((*path, "transport"), 'must be "http" (streamable HTTP) or "sse"')
        if "args" in server and not _strings(server["args"]):
            raise report((*path, "args"), "must be a list of strings")
        _server_env(server, path, report)
    return table


def _server_env(server: dict[str, Any], path: tuple[str, ...], report: Report) -> None:
    """`env` values are plain text, never a key; `headers_env` values are variable names."""
    if "env" in server:
        env = _table(server["env"], (*path, "env"), report)
        for var, value in env.items():
            if not isinstance(value, str):
                raise report((*path, "env", var), "must be a string")
            if looks_secret(value):
                raise report(
                    (*path, "env", var),
                    "looks like a key: a file names variables, never their values",
                )
    if "headers_env" in server:
        headers = _table(server["headers_env"], (*path, "headers_env"), report)
        for header, var in headers.items():
            if not _HEADER.fullmatch(header):
                raise report((*path, "headers_env", header), "is not an HTTP header name")
            try:
                env_name(var)
            except Invalid as exc:
                raise report((*path, "headers_env", header), str(exc)) from None


def check_hooks(data: Any, report: Report) -> dict[str, Any]:
    """`[[hooks.EVENT]]` arrays of `{match, command, timeout_s}`."""
    table = _table(data, ("hooks",), report)
    _unknown(table, HOOK_EVENTS, ("hooks",), report)
    for event, entries in table.items():
        if not isinstance(entries, list):
            raise report(("hooks", event), "must be an array of tables ([[hooks.EVENT]])")
        for index, raw in enumerate(entries):
            path = ("hooks", event, f"#{index}")
            hook = _table(raw, path, report)
            _unknown(hook, _HOOK_KEYS, path, report)
            if "command" not in hook:
                raise report(path, "needs command")
            command = hook["command"]
            if not (isinstance(command, str) and command) and not (_strings(command) and command):
                raise report((*path, "command"), "must be a string or a non-empty list of strings")
            if "match" in hook:
                _check_match(hook["match"], (*path, "match"), report)
            if "timeout_s" in hook:
                value = hook["timeout_s"]
                if (
                    isinstance(value, bool)
                    or not isinstance(value, int | float)
                    or not math.isfinite(value)
                    or not 0 < value <= HOOK_MAX_TIMEOUT_S
                ):
                    raise report(
                        (*path, "timeout_s"),
                        f"must be a number of seconds > 0 and at most {HOOK_MAX_TIMEOUT_S}, "
                        f"not {value!r}",
                    )
    return table


def _check_match(value: Any, path: tuple[str, ...], report: Report) -> None:
    """A hook's `match`: globs on the tool name separated by `|` (`*` or absent: every tool)."""
    if not isinstance(value, str) or not value.strip():
        raise report(path, "must be a glob on the tool name, such as exec or write_*|edit_file")
    if any(not alt.strip() for alt in value.split("|")):
        raise report(path, f"has an empty alternative between '|': {value!r}")
    if any(ord(c) < 0x20 for c in value):
        raise report(path, "must not hold control characters")


def refuse_key_values(table: dict[str, Any], path: tuple[str, ...], report: Report) -> None:
    """Refuse a key's value written in a file: `api_key`, or a secret under `*_key`/`*token`."""
    for key, value in table.items():
        lowered = key.lower()
        if lowered in ("api_key", "apikey", "key", "secret", "password", "token"):
            raise report(
                (*path, key),
                "a key's value is never written in a file: name the variable holding it "
                "with api_key_env",
            )
        if (
            isinstance(value, str)
            and (lowered.endswith(("_key", "token", "_secret", "password")))
            and not lowered.endswith("_env")
            and (looks_secret(value) or not value.isupper())
        ):
            raise report(
                (*path, key),
                "a key's value is never written in a file: name the variable holding it "
                "with api_key_env",
            )


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)

"""`ioh-tui config [--json]` and `ioh-tui config path`: the effective configuration, and its files.

Every value is shown with its source. A key is never shown: `api_key_env` is a variable's name,
printed with whether that variable is set, never with what it holds.
"""

from __future__ import annotations

import argparse
import json
import os
from typing import Any

from ioh_tui.cli.options import effective_config, left_out_lines
from ioh_tui.cli.terminal import say, say_json
from ioh_tui.config import KEYS, Config
from ioh_tui.config.schema import BY_PATH


def config_command(args: argparse.Namespace) -> int:
    """Print the configuration (or, with `path`, the files read); 0, or 2 for a bad file."""
    config = effective_config(args)
    if args.what == "path":
        return _paths(config, args.json)
    if args.json:
        say_json(json.dumps(_as_json(config)))
        return 0
    width = max(len(key.path) for key in KEYS)
    if config.profile:
        say(f"profile: {config.profile}")
    for key in KEYS:
        value = config.values[key.path]
        say(f"{key.path:<{width}}  {_shown(key.path, value.value)}  ({value.source})")
    for scope, path, table in config.policy_layers():
        layers = table.get("layers", [])
        say(f"policy: {len(layers)} layer(s) and defaults from {scope} {path}")
    servers = config.mcp_servers()
    if servers:
        say(f"mcp servers: {', '.join(sorted(servers))}")
    for event, hooks in sorted(config.hooks().items()):
        say(f"hooks.{event}: {len(hooks)}")
    for line in left_out_lines(config):
        say(f"ioh-tui: {line}", err=True)
    return 0


def _paths(config: Config, as_json: bool) -> int:
    if as_json:
        files = [
            {"scope": scope, "path": str(path), "exists": exists}
            for scope, path, exists in config.files
        ]
        say_json(json.dumps({"files": files}))
        return 0
    for scope, path, exists in config.files:
        say(f"{scope:<8} {path}  ({'exists' if exists else 'not found'})")
    return 0


def _shown(path: str, value: Any) -> str:
    """A value as a person reads it; None is the built-in behaviour in words."""
    if value is None:
        return f"<{BY_PATH[path].default_text or 'none'}>"
    if path == "provider.api_key_env":
        return f"{value} ({'set' if os.environ.get(value) else 'not set'})"
    return json.dumps(value) if isinstance(value, str) else str(value)


def _as_json(config: Config) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for key in KEYS:
        value = config.values[key.path]
        entry: dict[str, Any] = {"value": value.value, "source": value.source}
        if value.value is None:
            entry["default"] = key.default_text
        if key.path == "provider.api_key_env" and value.value is not None:
            entry["set"] = bool(os.environ.get(value.value))
        values[key.path] = entry
    return {
        "profile": config.profile,
        "values": values,
        "files": [
            {"scope": scope, "path": str(path), "exists": exists}
            for scope, path, exists in config.files
        ],
        "policy": [
            {"scope": scope, "path": str(path)} for scope, path, _ in config.policy_layers()
        ],
        "mcp_servers": sorted(config.mcp_servers()),
        "hooks": {event: len(hooks) for event, hooks in sorted(config.hooks().items())},
        "left_out": [{"section": kind, "file": str(path)} for kind, path in config.left_out],
    }

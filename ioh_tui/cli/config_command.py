"""`ioh-tui config [--json]` and `ioh-tui config path`: the effective configuration, and its files.

Every value is shown with its source. A key is never shown: `api_key_env` is a variable's name,
printed with whether that variable is set, never with what it holds.
"""

from __future__ import annotations

import argparse
import json
import os
from typing import Any

from ioh_tui.cli.effective import loaded_config
from ioh_tui.cli.options import effective_config, left_out_lines
from ioh_tui.cli.terminal import say, say_json
from ioh_tui.config import KEYS, Config
from ioh_tui.config.merge import Value
from ioh_tui.config.schema import BY_PATH


def config_command(args: argparse.Namespace) -> int:
    """Print the configuration (or, with `path`, the files read); 0, or 2 for a bad file."""
    config = effective_config(args)
    if args.what == "path":
        return _paths(config, args.json)
    values, held = _as_written(args, config)
    if args.json:
        say_json(json.dumps(_as_json(config, values, held)))
        return 0
    width = max(len(key.path) for key in KEYS)
    if config.profile:
        say(f"profile: {config.profile}")
    for key in KEYS:
        value = values[key.path]
        # After the source, not inside it: the parentheses hold the source alone.
        note = "  left out of runs until agreed" if key.path in held else ""
        say(f"{key.path:<{width}}  {_shown(key.path, value.value)}  ({value.source}){note}")
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


def _as_written(args: argparse.Namespace, config: Config) -> tuple[dict[str, Value], set[str]]:
    """Every key with the value the files give it, and the keys a run leaves out.

    A project's remote endpoint (`config/trust.py`) is shown as written, with its source, and
    marked: the table stays the precedence of the files, and the mark (with the left-out line)
    says that a run uses the next value down until the user agrees.
    """
    if not any(kind == "provider" for kind, _ in config.left_out):
        return config.values, set()
    written = loaded_config(args)[0].values
    held = {path for path, value in written.items() if value != config.values[path]}
    return {**config.values, **{path: written[path] for path in held}}, held


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


def _as_json(config: Config, shown: dict[str, Value], held: set[str]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for key in KEYS:
        value = shown[key.path]
        entry: dict[str, Any] = {"value": value.value, "source": value.source}
        if key.path in held:
            entry["left_out"] = True
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

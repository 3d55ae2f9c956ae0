"""`ioh-tui mcp list [--json] [--workspace DIR]`: each configured server started, listed, stopped.

A server that fails to start shows its error in its row (exit 0); a bad configuration is one line
(exit 2). A header's value is never printed: only the URL and the command line are.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

from ioh_tui.cli.options import build_policy, build_sandbox, effective_config
from ioh_tui.cli.terminal import say, say_json
from ioh_tui.core.acts import Act, Effect
from ioh_tui.core.errors import ConfigError
from ioh_tui.mcp import (
    INSTALL_HINT,
    Lister,
    ServerRow,
    ServerSpec,
    list_servers,
    sdk_available,
    server_specs,
)
from ioh_tui.policy import Policy


def mcp_specs(args: argparse.Namespace) -> tuple[ServerSpec, ...]:
    """The servers the configuration declares (those of a project not agreed to are left out)."""
    return server_specs(effective_config(args).mcp_servers())


def run_servers(args: argparse.Namespace) -> tuple[ServerSpec, ...]:
    """The servers a run starts; without the `mcp` extra, one line on stderr says so."""
    specs = mcp_specs(args)
    if specs and not sdk_available():
        say(f"ioh-tui: {INSTALL_HINT} (the run goes on without its servers)", err=True)
    return specs


def _network_for(policy: Policy) -> Callable[[ServerSpec], bool]:
    """A local server gets the network where a `net` rule allows its command line."""

    def network_for(spec: ServerSpec) -> bool:
        allowed = policy.explain(Act.NET, spec.line).effect is Effect.ALLOW
        return spec.kind == "stdio" and allowed

    return network_for


def start_screen_lister(args: argparse.Namespace) -> Lister | None:
    """What the app's start screen lists the configured servers with (None: there are none)."""
    specs = mcp_specs(args)
    if not specs:
        return None
    root = Path.cwd().resolve()
    sandbox = build_sandbox(args)
    network_for = _network_for(build_policy(args, None))

    async def lister() -> list[ServerRow]:
        return await list_servers(specs, sandbox, root, network_for)

    return lister


def mcp_command(args: argparse.Namespace) -> int:
    """`ioh-tui mcp list`."""
    root = Path(args.workspace).resolve() if args.workspace else Path.cwd().resolve()
    if not root.is_dir():
        raise ConfigError(f"workspace {root} does not exist or is not a directory")
    specs = mcp_specs(args)
    if specs and not sdk_available():
        raise ConfigError(INSTALL_HINT)
    if not specs:
        if args.json:
            say_json(json.dumps({"servers": []}))
        else:
            say("no MCP servers configured ([mcp.servers.NAME] in a configuration file)")
        return 0
    sandbox = build_sandbox(args)
    network_for = _network_for(build_policy(args, None))
    rows = asyncio.run(list_servers(specs, sandbox, root, network_for))
    if args.json:
        say_json(json.dumps({"servers": [asdict(row) for row in rows]}))
        return 0
    for row in rows:
        count = f"{len(row.tools)} tools" if row.state == "ready" else row.state
        if row.resources:
            count += f", {len(row.resources)} resources"
        say(f"{row.name}  {row.kind}  {count}  {row.line}")
        if row.error:
            say(f"  error: {row.error}")
            continue
        if row.tools:
            say(f"  tools: {', '.join(row.tools)}")
        if row.resources:
            uris = (f"{r['uri']}{' (template)' if r['template'] else ''}" for r in row.resources)
            say(f"  resources: {', '.join(uris)}")
    return 0

"""The run's extensions from the configuration files: its hooks and MCP servers.

Both come from the files of the run's own workspace (a resumed run's is the stored one, not the
current directory), so every way of driving a run — `exec`, `run`, `resume` headless or in the
app, a resume from the app's run browser or queue — runs under the same hooks and servers.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ioh_tui.cli.mcp_command import run_servers
from ioh_tui.cli.options import effective_config
from ioh_tui.hooks import HookSet
from ioh_tui.mcp import ServerSpec


def for_workspace(args: argparse.Namespace, root: Path) -> argparse.Namespace:
    """`args` with the workspace set to `root`: its project file is the one read."""
    return argparse.Namespace(**{**vars(args), "workspace": str(root)})


def build_hooks(args: argparse.Namespace, root: Path) -> HookSet:
    """The hooks of the user's file, and the project's once the user agreed to them.

    The configuration is the run's (`effective_config`): a project's hooks nobody agreed to are
    already left out (`--trust-project` agrees for this command), and `exec` says so in one line
    per section left out (the app shows them first).

    Raises:
        ConfigError: a bad configuration file or trust record.
    """
    return HookSet.from_config(effective_config(for_workspace(args, root)).hooks())


def run_extensions(args: argparse.Namespace, root: Path) -> tuple[HookSet, tuple[ServerSpec, ...]]:
    """The hooks and the MCP servers of a run working in `root`.

    Raises:
        ConfigError: a bad configuration file or trust record.
    """
    return build_hooks(args, root), run_servers(for_workspace(args, root))

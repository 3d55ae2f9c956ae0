"""The run's extensions from the configuration files: its hooks (docs/extending.md)."""

from __future__ import annotations

import argparse
from pathlib import Path

from ioh_tui.cli.options import effective_config
from ioh_tui.hooks import HookSet


def build_hooks(args: argparse.Namespace, root: Path) -> HookSet:
    """The hooks of the user's file, and the project's once the user agreed to them.

    The configuration is the run's (`effective_config`): a project's hooks nobody agreed to are
    already left out (`--trust-project` agrees for this command), and `exec` says so in one line
    per section left out (the app shows them first).

    Raises:
        ConfigError: a bad configuration file or trust record.
    """
    # The files of the run's own workspace (a resumed run's is the stored one, not the cwd).
    config = effective_config(argparse.Namespace(**{**vars(args), "workspace": str(root)}))
    return HookSet.from_config(config.hooks())

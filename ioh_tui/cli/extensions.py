"""The run's extensions from the configuration files: its hooks (docs/extending.md)."""

from __future__ import annotations

import argparse
from pathlib import Path

from ioh_tui.cli.options import effective_config
from ioh_tui.cli.terminal import say
from ioh_tui.config.trust import TrustBook, keep_trusted, project_sections
from ioh_tui.hooks import HookSet


def build_hooks(args: argparse.Namespace, root: Path) -> HookSet:
    """The hooks of the user's file, and the project's once the user agreed to them.

    `--trust-project` agrees for this command; otherwise a project's hooks nobody agreed to are
    left out with one line on stderr (the app shows them first).

    Raises:
        ConfigError: a bad configuration file or trust record.
    """
    # The files of the run's own workspace (a resumed run's is the stored one, not the cwd).
    config = effective_config(argparse.Namespace(**{**vars(args), "workspace": str(root)}))
    agreed = tuple(project_sections(config)) if getattr(args, "trust_project", False) else ()
    kept, left_out = keep_trusted(config, root, TrustBook(), agreed=agreed)
    if "hooks" in left_out:
        say(
            "the project file's hooks are not used: nobody agreed to them yet "
            "(--trust-project uses them; the app asks)",
            err=True,
        )
    return HookSet.from_config(kept.hooks())

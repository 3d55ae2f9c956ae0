"""`--ray ADDRESS`: the cluster a tree's sub-agents run on (`exec`, `resume`, `run`).

The one place the command line reaches the fleet, and so Ray (an import contract keeps it so):
without `--ray` nothing here imports either.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from ioh_tui.core.errors import ConfigError
from ioh_tui.engine import Containment

if TYPE_CHECKING:
    from ioh_tui.fleet.placement import RayFleet


def need_a_tree(args: argparse.Namespace, containment: Containment | None) -> None:
    """Refuse `--ray` for a run that spawns nothing (before anything starts).

    Raises:
        ConfigError: `--ray` without a tree option.
    """
    if args.ray is not None and containment is None:
        raise ConfigError(
            "--ray places a tree's sub-agents: give a tree option too (--max-agents, ...)"
        )


def connect_fleet(args: argparse.Namespace) -> RayFleet | None:
    """The Ray cluster `--ray` names, joined (or started); None without `--ray`.

    Raises:
        ConfigError: The `ray` extra is missing, or the cluster cannot be reached (exit 2).
    """
    if args.ray is None:
        return None
    from ioh_tui.fleet.placement import connect

    return connect(args.ray)

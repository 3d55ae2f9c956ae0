"""What `ioh-tui` and `ioh-tui demo` hand the app: each imports a run's parts on its first use.

The start screen is drawn before any of them is called, so the app's first frame waits for no
engine, provider, policy, sandbox or MCP import (issue 23; tests/tui/test_command_first_frame.py).
They are called when the person resumes a run from the app (`stored_provider`, `extensions_for`)
or once the start screen is up (`mcp_lister`).
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

    from ioh_tui.config import Config
    from ioh_tui.hooks import HookSet
    from ioh_tui.mcp import Lister, ServerRow, ServerSpec
    from ioh_tui.providers.base import Provider


def stored_provider(contract: dict[str, Any]) -> Provider:
    """`options.stored_provider`: the provider that continues a stored run, from its contract."""
    from ioh_tui.cli.options import stored_provider as build

    return build(contract)


def extensions_for(
    args: argparse.Namespace,
) -> Callable[[Path], tuple[HookSet, tuple[ServerSpec, ...]]]:
    """The hooks and MCP servers of a run resumed from the app, by its workspace."""

    def extensions(root: Path) -> tuple[HookSet, tuple[ServerSpec, ...]]:
        from ioh_tui.cli.extensions import run_extensions

        return run_extensions(args, root)

    return extensions


def mcp_lister(args: argparse.Namespace, config: Config) -> Lister | None:
    """What the start screen lists the configured MCP servers with (None: none is configured).

    Whether there are servers is read from `config` (the screen has a table for them only then);
    the sandbox and the policy they are started under are built at the first listing, in a thread
    so the screen keeps answering keys meanwhile. An error building them (a sandbox backend this
    machine lacks, a policy file that does not read) is the screen's notification.
    """
    if not config.mcp_servers():
        return None
    built: list[Lister | None] = []

    async def lister() -> list[ServerRow]:
        if not built:
            from ioh_tui.cli.mcp_command import start_screen_lister

            built.append(await asyncio.to_thread(start_screen_lister, args))
        listing = built[0]
        return [] if listing is None else await listing()

    return lister

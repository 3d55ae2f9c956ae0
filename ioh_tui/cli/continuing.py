"""`--continue RUN`: a new run that carries on a stored run's conversation.

The new run's model reads, before its own turns, every turn of the conversation the stored run
belongs to (its own and those it carried on), as a later prompt of an ACP session does
(`engine/session.carried`). Each run still records only its own steps and names the runs it
carries on in its contract (`"continues"`), so a resume rebuilds the same conversation.
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

from ioh_tui.cli.options import store_path
from ioh_tui.core.errors import ConfigError, IohError
from ioh_tui.core.outcomes import run_state
from ioh_tui.store import Store


def continued(args: argparse.Namespace) -> tuple[argparse.Namespace, tuple[int, ...]]:
    """`args` with the stored run's workspace when none was given, and the runs carried on.

    Raises:
        ConfigError: no such run, a sub-agent's run, a run still being driven, or a
            `--workspace` other than the run's (one line each).
    """
    given = getattr(args, "continue_run", None)
    if given is None:
        return args, ()
    text = str(given).removeprefix("run-")
    if not text.isdigit():
        raise ConfigError(f"--continue {given}: give a run id (`ioh-tui runs` lists them)")
    run_id = int(text)

    async def read() -> tuple[Path, list[int], str, int | None]:
        async with Store.open(store_path(args), create=False) as store:
            row = await store.run(run_id)
            state = run_state(row, await store.driven_runs())
        earlier = [int(r) for r in row.contract.get("continues") or []]
        tree = row.root_run_id if row.parent_run_id is not None else None
        return Path(row.root), [*earlier, run_id], state, tree

    try:
        root, chain, state, tree = asyncio.run(read())
    except IohError as exc:
        raise ConfigError(f"--continue {given}: {exc}") from None
    if tree is not None:
        raise ConfigError(
            f"--continue {given}: run {run_id} is a sub-agent's; continue its tree's root, "
            f"run {tree}"
        )
    if state == "running":
        raise ConfigError(f"--continue {given}: run {run_id} is still being driven; wait for it")
    workspace = getattr(args, "workspace", None)
    if workspace is None:
        return argparse.Namespace(**{**vars(args), "workspace": str(root)}), tuple(chain)
    if Path(workspace).resolve() != root:
        raise ConfigError(f"--continue {given}: run {run_id} worked in {root}, not {workspace}")
    return args, tuple(chain)

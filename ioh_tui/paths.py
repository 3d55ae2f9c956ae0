"""Where ioh-tui keeps its files; an environment variable can move every location (tests do)."""

from __future__ import annotations

import os
from pathlib import Path

from ioh_tui.core.errors import ConfigError

STORE_SIBLINGS = ("-wal", "-shm", "-journal", ".key")
"""Suffixes of the files that travel with a store: SQLite's write-ahead log, shared memory and
rollback journal, and the key that seals its answers (`store/seal.py`)."""


def data_dir() -> Path:
    """`$IOH_TUI_HOME`, else `$XDG_DATA_HOME/ioh-tui`, else `~/.local/share/ioh-tui`."""
    if home := os.environ.get("IOH_TUI_HOME"):
        return Path(home)
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "ioh-tui"


def default_store() -> Path:
    """The store used when `--store` is not given."""
    return data_dir() / "store.db"


def store_key(store: str | os.PathLike[str]) -> Path:
    """The file holding the secret that seals the answers of the store at `store`."""
    return Path(f"{os.fspath(store)}.key")


def store_files(store: str | os.PathLike[str]) -> list[Path]:
    """The store and every file that travels with it (`STORE_SIBLINGS`), existing or not."""
    name = os.fspath(store)
    return [Path(name), *(Path(f"{name}{suffix}") for suffix in STORE_SIBLINGS)]


def check_store_placement(store: str | os.PathLike[str], workspace: Path) -> None:
    """Refuse a store (or its data directory) inside the workspace, which commands can write.

    The sandbox hides the store from commands, but a mount over a file in a writable tree can be
    worked around (a renamed parent, a new log beside it), and on the floor nothing is hidden:
    a store there could be rewritten by the agent's commands. Moving it is the user's call.

    Raises:
        ConfigError: The store is inside `workspace`.
    """
    name = os.fspath(store)
    if name == ":memory:":
        return
    real = Path(os.path.realpath(name))
    root = Path(os.path.realpath(workspace))
    if real.is_relative_to(root):
        raise ConfigError(
            f"the store {name} is inside the workspace {workspace}, where the agent's commands "
            "can write it; keep it elsewhere (--store)"
        )

"""Where ioh-tui keeps its files; an environment variable can move every location (tests do)."""

from __future__ import annotations

import os
from pathlib import Path


def data_dir() -> Path:
    """`$IOH_TUI_HOME`, else `$XDG_DATA_HOME/ioh-tui`, else `~/.local/share/ioh-tui`."""
    if home := os.environ.get("IOH_TUI_HOME"):
        return Path(home)
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "ioh-tui"


def default_store() -> Path:
    """The store used when `--store` is not given."""
    return data_dir() / "store.db"

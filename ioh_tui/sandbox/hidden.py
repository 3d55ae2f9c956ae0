"""The harness's own files, hidden from every command on the mount-namespace rungs.

A command that can read the store reads every run's transcript; one that can write it answers the
operator's decisions (issue 18, item 2). So bubblewrap and namespaces cover, for every command:

- the data directory (`paths.data_dir()`: the default store, the app's remembered rules) with an
  empty read-only tmpfs;
- every store this process has open (`hidden_while_open`, which `Store.open` holds), with its
  write-ahead log, shared memory, journal and key (`paths.store_files`), each with /dev/null.

A `Guard` carries what the run's policy adds for one command: the workspace files a deny rule
names, masked, and the files the host runs, read-only (`guard.py` applies it).

The floor and `none` cannot hide anything: docs/security.md says so.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ioh_tui.paths import data_dir, default_store, store_files

_open: Counter[str] = Counter()
"""Stores open in this process (a store opened twice is hidden until both are closed)."""


@contextmanager
def hidden_while_open(store: str | os.PathLike[str]) -> Iterator[None]:
    """Hide the store at `store` (and its companions) from every command while this is held."""
    name = os.fspath(store)
    if name == ":memory:":
        yield
        return
    where = os.path.abspath(name)
    _open[where] += 1
    try:
        yield
    finally:
        _open[where] -= 1
        if not _open[where]:
            del _open[where]


def open_stores() -> list[str]:
    """The stores hidden now (absolute paths)."""
    return list(_open)


def harness_paths(keep: Sequence[Path]) -> tuple[list[str], list[str]]:
    """(directories, files) of the harness to hide; only those that exist.

    Args:
        keep: the working directory and writable roots. The data directory is covered whole
            unless it holds one of them (then only its default store's files are); a path under
            /tmp or /dev/shm outside them is already replaced by private tmpfs.

    Returns:
        Real (symlink-free) paths.
    """
    dirs: list[str] = []
    stores = list(_open)
    home = Path(os.path.realpath(data_dir()))
    if home.is_dir() and _visible(home, keep):
        if any(k == home or home in k.parents for k in keep):
            stores.append(str(default_store()))
        else:
            dirs.append(str(home))
    files: dict[str, None] = {}
    for store in stores:
        for path in store_files(store):
            real = Path(os.path.realpath(path))
            covered = any(real.is_relative_to(d) for d in dirs)
            if real.is_file() and _visible(real, keep) and not covered:
                files[str(real)] = None
    return dirs, list(files)


def _visible(real: Path, keep: Sequence[Path]) -> bool:
    """Whether `real` would be seen by a command at all (not under a private tmpfs)."""
    private = real.is_relative_to("/tmp") or real.is_relative_to("/dev/shm")
    return not private or any(real.is_relative_to(k) for k in keep)


@dataclass(frozen=True, slots=True)
class Guard:
    """What the policy keeps from one command inside its writable tree (issue 18, items 4, 10).

    Paths are absolute and real. The mount-namespace rungs apply it after the writable binds.
    """

    masked: tuple[str, ...] = ()
    """Files a deny rule forbids reading: covered by /dev/null."""
    readonly: tuple[str, ...] = ()
    """Files and directories the host runs (`.git/config`, `.git/hooks`, ...): bound read-only."""
    pinned: tuple[str, ...] = ()
    """Directories between the working directory and a read-only path: bound onto themselves,
    so they cannot be renamed away and replaced by a fresh, writable copy."""

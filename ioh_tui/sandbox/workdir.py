"""An ephemeral per-run work directory, removed on every exit path (used for gate commands)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

_ExcInfo = tuple[type[BaseException], BaseException, TracebackType | None]


class workdir:
    """A fresh private directory that is deleted when the block ends, however it ends.

    Usable both as `with workdir(prefix) as path:` and `async with workdir(prefix) as path:`.
    Deletion copes with what sandboxed tools leave behind: read-only files and directories
    without write or execute permission are made writable first.
    """

    def __init__(self, prefix: str = "ioh-", parent: Path | None = None) -> None:
        """Prepare (nothing is created until the block is entered).

        Args:
            prefix: start of the directory name.
            parent: where to create it (default: the system temp dir).
        """
        self._prefix = prefix
        self._parent = parent
        self._path: Path | None = None

    def __enter__(self) -> Path:
        self._path = Path(tempfile.mkdtemp(prefix=self._prefix, dir=self._parent)).resolve()
        return self._path

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._path is not None:
            remove_tree(self._path)
            self._path = None

    async def __aenter__(self) -> Path:
        return self.__enter__()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        path, self._path = self._path, None
        if path is None:
            return
        # A build tree can take a while to delete, so do it off the loop; the shield lets the
        # deletion finish even if this task is cancelled meanwhile.
        removal = asyncio.ensure_future(asyncio.to_thread(remove_tree, path))
        try:
            await asyncio.shield(removal)
        except asyncio.CancelledError:
            await asyncio.wait({removal})
            raise


def remove_tree(path: Path) -> None:
    """Delete `path` recursively, fixing permissions that would block the deletion."""
    shutil.rmtree(path, onerror=_fix_and_retry)


def _fix_and_retry(func: Callable[..., object], failed: str, exc_info: _ExcInfo) -> None:
    if isinstance(exc_info[1], FileNotFoundError):
        return
    # Deleting an entry needs write+execute on its parent; listing a directory needs read+execute.
    for target in (os.path.dirname(failed), failed):
        with contextlib.suppress(OSError):
            mode = os.lstat(target).st_mode
            if not stat.S_ISLNK(mode):
                os.chmod(target, stat.S_IMODE(mode) | stat.S_IRWXU)
    if func in (os.open, os.scandir, os.listdir):
        shutil.rmtree(failed, onerror=_fix_and_retry)
    elif func is os.rmdir:
        with contextlib.suppress(FileNotFoundError):
            os.rmdir(failed)
    else:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(failed)

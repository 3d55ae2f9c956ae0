"""StoreWatch: whether the store was written, from its files' times and sizes (no SQLite read).

Its own module so the start screen watches the store without importing the run browser.
"""

from __future__ import annotations

import os
from pathlib import Path

WATCH_S = 0.5
"""How often a live screen looks at the store's files for a write (two `stat` calls)."""
REREAD_S = 5.0
"""How often a live screen reads the store anyway (a write the file times could not show)."""


class StoreWatch:
    """Tells that the store was written since last asked, from its files' times and sizes.

    Every commit writes the write-ahead log (`<store>-wal`), and a checkpoint the store itself:
    two `stat` calls tell it, no SQLite read. Two writes within one tick of the file system's clock
    that leave the log's size alone look like one; the screens read the store every `REREAD_S`
    anyway.
    """

    def __init__(self, path: Path) -> None:
        """Watch the store at `path` (it may not exist yet)."""
        self.paths = (path, path.with_name(f"{path.name}-wal"))
        self.seen = self._stamp()
        self._since = 0.0

    def _stamp(self) -> tuple[tuple[int, int] | None, ...]:
        stamps: list[tuple[int, int] | None] = []
        for path in self.paths:
            try:
                info = os.stat(path)
            except OSError:
                stamps.append(None)
            else:
                stamps.append((info.st_mtime_ns, info.st_size))
        return tuple(stamps)

    def changed(self) -> bool:
        """Whether the store was written since the last call (or since it was made)."""
        now = self._stamp()
        if now == self.seen:
            return False
        self.seen = now
        return True

    def due(self) -> bool:
        """Called every `WATCH_S`: whether to read the store now (written, or `REREAD_S` on)."""
        self._since += WATCH_S
        if self.changed() or self._since >= REREAD_S:
            self._since = 0.0
            return True
        return False

"""Project instructions: `AGENTS.md` at the workspace root (else `CLAUDE.md`), pinned every turn.

The file is the project's word on how an agent should work in it (as Codex, Claude Code and
opencode read it). It is read once per drive, capped, and sent after the task block with its
path named, so the model knows where the words come from; being pinned, it survives compaction.
A workspace's file is the project's, not the operator's: the policy still decides every act.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

NAMES = ("AGENTS.md", "CLAUDE.md")
"""Looked for in this order; the first that is a readable file wins."""
MAX_CHARS = 16_000
"""About 4,000 tokens: room for a real project's file, not for a dump that crowds the window."""
_READ_BYTES = 1 << 20
"""Read at most this much: the cap's characters, and a count of what was cut beyond them."""


@dataclass(frozen=True, slots=True)
class Instructions:
    """A project's instructions as the model sees them."""

    name: str
    """The file's name in the workspace root (`AGENTS.md` or `CLAUDE.md`)."""
    text: str
    """Its text, cut to `MAX_CHARS`."""
    cut: int
    """Characters left out by the cap (0: the whole file; counted within the first MiB read)."""

    def block(self) -> str:
        """The pinned message."""
        lines = [f"Project instructions (from {self.name} at the workspace root):", self.text]
        if self.cut:
            lines.append(f"[{self.cut:,} more characters of {self.name} are not shown]")
        return "\n".join(lines)


def find_instructions(root: Path) -> Instructions | None:
    """The workspace's instructions file, if it has one (an unreadable one counts as none)."""
    for name in NAMES:
        raw = _read_bounded(root / name)
        if raw is None:
            continue
        text = raw.decode("utf-8", errors="replace").replace("\x00", "").strip()
        if not text:
            continue
        return Instructions(name, text[:MAX_CHARS], max(0, len(text) - MAX_CHARS))
    return None


def _read_bounded(path: Path) -> bytes | None:
    """The file's first bytes (enough for `MAX_CHARS` and the count of the rest), opened once.

    `O_NOFOLLOW`: a link could point anywhere on the host, and checking then reading would let it
    be swapped in between. A file of gigabytes is not read whole for a 16,000-character cap.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as file:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return file.read(_READ_BYTES)

"""Project instructions: `AGENTS.md` at the workspace root (else `CLAUDE.md`), pinned every turn.

The file is the project's word on how an agent should work in it (as Codex, Claude Code and
opencode read it). It is read once per drive, capped, and sent after the task block with its
path named, so the model knows where the words come from; being pinned, it survives compaction.
A workspace's file is the project's, not the operator's: the policy still decides every act.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ioh_tui.skills import read_bounded

NAMES = ("AGENTS.md", "CLAUDE.md")
"""Looked for in this order; the first that is a readable file wins."""
MAX_CHARS = 16_000
"""About 4,000 tokens: room for a real project's file, not for a dump that crowds the window."""


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
        raw = read_bounded(root / name)  # once, O_NOFOLLOW, at most a MiB
        if raw is None:
            continue
        text = raw.decode("utf-8", errors="replace").replace("\x00", "").strip()
        if not text:
            continue
        return Instructions(name, text[:MAX_CHARS], max(0, len(text) - MAX_CHARS))
    return None

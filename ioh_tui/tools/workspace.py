"""Path confinement for every tool: a relative path resolves inside the root, or is refused."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

SKIP_DIRS = frozenset({".git", "node_modules", "target", ".venv"})
"""Directories that walks (grep, find) never enter, at any depth."""


class Escape(Exception):
    """A path that would leave the workspace; the message is the reason the model reads."""


@dataclass(frozen=True, slots=True)
class Workspace:
    """A root directory the agent's file tools are confined to."""

    root: Path

    @classmethod
    def at(cls, root: str | Path) -> Workspace:
        """A workspace at `root` (made absolute and canonical)."""
        return cls(Path(root).resolve())

    def normalise(self, path: str) -> str:
        """The lexically normalised relative form of `path` (`""` is the root).

        Raises:
            Escape: for absolute paths and `..` that climbs above the root.
        """
        text = path.replace("\\", "/").strip()
        if text.startswith("/") or (len(text) > 1 and text[1] == ":"):
            raise Escape(
                f"{path!r} is an absolute path; give a path relative to the workspace root"
            )
        parts: list[str] = []
        for part in PurePosixPath(text).parts:
            if part in ("", "."):
                continue
            if part == "..":
                if not parts:
                    raise Escape(f"{path!r} escapes the workspace root")
                parts.pop()
                continue
            parts.append(part)
        return "/".join(parts)

    def resolve(self, path: str) -> tuple[str, Path]:
        """The relative form and the absolute path of `path`, refusing any escape.

        Symlinks are followed: a path whose real location is outside the root is refused, even
        when it does not exist yet (its nearest existing ancestor decides).
        """
        rel = self.normalise(path)
        absolute = self.root / rel if rel else self.root
        real = _real_path(absolute)
        if real != self.root and self.root not in real.parents:
            raise Escape(f"{path!r} resolves outside the workspace root")
        return rel, absolute

    def relative(self, absolute: Path) -> str:
        """A workspace-relative name for a path under the root."""
        return absolute.relative_to(self.root).as_posix()

    def walk_files(self, start: Path | None = None) -> list[Path]:
        """Every regular file under `start` (default the root), sorted, skipping `SKIP_DIRS`.

        Symlinked directories are not descended and symlinked files are not listed, so a walk
        never leaves the root.
        """
        base = start or self.root
        found: list[Path] = []
        for dirpath, dirnames, filenames in os.walk(base, followlinks=False):
            dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
            for name in filenames:
                candidate = Path(dirpath, name)
                if not candidate.is_symlink() and candidate.is_file():
                    found.append(candidate)
        found.sort()
        return found


def _real_path(path: Path) -> Path:
    """The canonical path of `path`, or of its nearest existing ancestor plus the rest."""
    missing: list[str] = []
    current = path
    while True:
        try:
            real = current.resolve(strict=True)
        except (FileNotFoundError, NotADirectoryError):
            missing.append(current.name)
            if current.parent == current:
                return path
            current = current.parent
            continue
        except RuntimeError:  # a symlink loop: treat as outside
            return Path("/")
        for name in reversed(missing):
            real = real / name
        return real

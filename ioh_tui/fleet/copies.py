"""A child's workspace on a node that does not share the root's filesystem: a copy, and a patch.

Shared or not is found out, not configured: the root writes a marker file with a random
content into the workspace, and an actor that reads the same content at the same path shares
it (`marker`, `ChildWorker.shares`). Not shared: the child works in a copy of the workspace
unpacked on its node (`pack`, `unpack`), and what it changed comes back as a `Patch` of whole
files. The root applies a change only where the child's policy does not deny the write and the
file is still as the child found it (another child may have changed it meanwhile): the rest is
refused, and the parent reads which in the child's report.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import secrets
import tarfile
from dataclasses import dataclass, field
from pathlib import Path

from ioh_tui.config.locations import PROJECT_DIR
from ioh_tui.core.acts import Act, Effect
from ioh_tui.policy import Policy
from ioh_tui.tools.beneath import locate, open_in, write_spot
from ioh_tui.tools.workspace import Escape

MARKER_PREFIX = "fleet-marker-"
"""The marker's name in the workspace's `.ioh-tui/` (never part of a copy or a patch)."""


@dataclass(frozen=True, slots=True)
class Change:
    """One file the child changed: its new bytes (None: removed), and the digest it started from."""

    path: str
    content: bytes | None
    base: str | None
    """SHA-256 of the file the copy held (None: the child created it)."""


@dataclass(frozen=True, slots=True)
class Patch:
    """What a child changed in its copy."""

    changes: tuple[Change, ...] = ()


@dataclass(slots=True)
class Applied:
    """What the root did with a patch."""

    applied: list[str] = field(default_factory=list)
    refused: list[tuple[str, str]] = field(default_factory=list)
    """(path, why) of each change left out."""

    def summary(self) -> str:
        """One line for the child's report (empty when the patch was empty)."""
        if not self.applied and not self.refused:
            return ""
        line = f"[workspace copy: {len(self.applied)} change(s) applied"
        if self.refused:
            line += "; refused: " + ", ".join(f"{p} ({why})" for p, why in self.refused)
        return line + "]"


def marker(root: Path) -> tuple[str, str]:
    """Write a fresh marker into `root`'s `.ioh-tui/`: (its path, its content)."""
    path = root / PROJECT_DIR / f"{MARKER_PREFIX}{os.getpid()}-{secrets.token_hex(4)}"
    path.parent.mkdir(exist_ok=True)
    content = secrets.token_hex(16)
    path.write_text(content, encoding="utf-8")
    return str(path), content


def pack(root: Path) -> bytes:
    """The workspace as a tar archive (regular files and directories; no markers)."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as tar:
        for path in sorted(_files(root)):
            tar.add(root / path, arcname=path, recursive=False)
    return out.getvalue()


def unpack(archive: bytes, into: Path) -> dict[str, str]:
    """Unpack a copy into `into`; the digest of each file, by relative path."""
    with tarfile.open(fileobj=io.BytesIO(archive), mode="r") as tar:
        tar.extractall(into, filter="data")
    return {path: _digest(into / path) for path in _files(into)}


def changes(copy: Path, base: dict[str, str]) -> Patch:
    """What changed in `copy` since it was unpacked with digests `base`."""
    now = {path: _digest(copy / path) for path in _files(copy)}
    found = [
        Change(path, (copy / path).read_bytes(), base.get(path))
        for path, digest in sorted(now.items())
        if base.get(path) != digest
    ]
    found += [
        Change(path, None, digest) for path, digest in sorted(base.items()) if path not in now
    ]
    return Patch(tuple(found))


def apply(root: Path, patch: Patch, policy: Policy) -> Applied:
    """Apply what the policy allows and what nobody changed meanwhile; say what was refused.

    Each file is reached as the tools reach one (`tools/beneath`): through directory descriptors
    beneath the root, so a symlink planted on the way (by a command of another agent, say) is
    refused rather than followed.
    """
    done = Applied()
    real_root = root.resolve()
    for change in patch.changes:
        why = _refusal(change, policy) or _written(real_root, change)
        if why is not None:
            done.refused.append((change.path, why))
        else:
            done.applied.append(change.path)
    return done


def _refusal(change: Change, policy: Policy) -> str | None:
    parts = Path(change.path).parts
    if Path(change.path).is_absolute() or ".." in parts or parts[:1] == (PROJECT_DIR,):
        return "outside the workspace"
    if policy.explain(Act.WRITE, change.path).effect is Effect.DENY:
        return "the policy denies the write"
    return None


def _written(root: Path, change: Change) -> str | None:
    """Make the change if the file is as the child found it; else why not."""
    try:
        spot = locate(root, change.path, make_dirs=change.content is not None)
    except (Escape, OSError):
        return "a link on the root's side"
    with spot:
        if spot.real != change.path:
            return "a link on the root's side"
        try:
            with os.fdopen(open_in(spot), "rb") as handle:
                current: str | None = hashlib.file_digest(handle, "sha256").hexdigest()
        except FileNotFoundError:
            current = None
        except OSError:
            return "not a file on the root's side"
        if current != change.base:
            return "changed meanwhile by another agent"
        if change.content is None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(spot.name, dir_fd=spot.dir_fd)
        else:
            write_spot(spot, change.content)
    return None


def _files(root: Path) -> list[str]:
    """Regular files under `root`, relative, but for the harness's own directory."""
    found = []
    for here, dirs, files in os.walk(root):
        rel = Path(here).relative_to(root)
        if rel == Path("."):
            dirs[:] = [d for d in dirs if d != PROJECT_DIR]
        for name in files:
            path = Path(here) / name
            if path.is_file() and not path.is_symlink():
                found.append((rel / name).as_posix())
    return found


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()

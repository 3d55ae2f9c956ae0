"""The run's policy as the sandbox applies it to a command: what it may not read or write.

The policy decides the harness's own file tools; an approved command reaches the files directly.
So before each command the workspace is walked once and the sandbox (bubblewrap, namespaces)
gets a `Guard`:

- every file a deny rule forbids reading (the built-in secrets among them) is masked;
- every file a `write deny` rule names (a gate's own test files) is read-only;
- every file or directory the host runs (`policy.builtin.HOST_EXECUTED`: `.git/config`,
  `.git/hooks`, `.envrc`, editor tasks, ...) is read-only unless a rule names it exactly (for a
  directory, `write allow DIR/*`), and the directories above it are pinned.

Bounded: at most `MAX_ENTRIES` entries are looked at, breadth first, and `MAX_MOUNTS` paths
guarded (each is a mount); `.git` is not walked beyond its config and hooks, nor are installed
dependencies (`node_modules`, `site-packages`). A file past the bounds, created after
the command started, or another hard link to a denied file is not guarded (docs/security.md).
"""

from __future__ import annotations

import os
import re
from collections import deque
from collections.abc import Iterable
from pathlib import Path

from ioh_tui.core.acts import Act, Effect
from ioh_tui.policy import Policy
from ioh_tui.policy.builtin import HOST_EXECUTED, host_executed
from ioh_tui.policy.glob import glob_to_regex
from ioh_tui.policy.types import normalise_path_pattern
from ioh_tui.sandbox import Guard

MAX_ENTRIES = 10_000
MAX_MOUNTS = 256
_GIT = ".git"
_DEPENDENCIES = frozenset({"node_modules", "site-packages", "dist-packages"})
"""Installed third-party code, not walked: it holds no secret of the project's, its public
`*.pem` CA bundles must stay readable (an HTTP client loads one at start), and it is most of a
workspace's files."""


def policy_guard(policy: Policy, root: Path) -> Guard:
    """The guard `policy` puts on commands that run in the workspace `root`."""
    walk = _Walk(policy, Path(os.path.realpath(root)))
    walk.walk()
    pinned: dict[str, None] = {}
    for rel in walk.protected:
        parts = rel.split("/")[:-1]
        for depth in range(1, len(parts) + 1):
            pinned[str(walk.root.joinpath(*parts[:depth]))] = None
    return Guard(
        masked=tuple(str(walk.root / rel) for rel in walk.masked),
        readonly=tuple(str(walk.root / rel) for rel in walk.readonly),
        pinned=tuple(pinned),
    )


class _Any:
    """One regex for many policy globs: a cheap first test before the policy itself decides.

    Asking the policy about every file costs about 0.4 ms (every built-in pattern is tried);
    most files match no deny rule and no protected pattern, and this says so in microseconds.
    """

    def __init__(self, patterns: Iterable[str]) -> None:
        sources = {glob_to_regex(p) for p in patterns}
        sources |= {glob_to_regex(normalise_path_pattern(p)) for p in patterns}
        either = "|".join(f"(?:{s})" for s in sorted(sources)) or "(?!)"
        # The whole path, or a tail of it after a `/` (which covers the last segment).
        self._regex = re.compile(f"(?:.*/)?(?:{either})", re.S)

    def maybe(self, rel: str) -> bool:
        """Whether some pattern may match `rel` (its whole path or its last segment)."""
        return self._regex.fullmatch(rel) is not None


_HOST_RUN = _Any(pattern for pattern, _ in HOST_EXECUTED)


class _Walk:
    """One bounded walk of the workspace, never following a symlink."""

    def __init__(self, policy: Policy, root: Path) -> None:
        self.policy = policy
        self.root = root
        self._denies = _Any(
            rule.pattern
            for layer in policy.layers
            for rule in layer.rules
            if rule.act is Act.READ and rule.effect is Effect.DENY
        )
        self._write_denies = _Any(
            rule.pattern
            for layer in policy.layers
            for rule in layer.rules
            if rule.act is Act.WRITE and rule.effect is Effect.DENY
        )
        self.masked: list[str] = []
        self.readonly: list[str] = []
        self.protected: list[str] = []
        """Guarded paths the host runs (masked or read-only): their parents are pinned."""
        self._entries = 0

    def _full(self) -> bool:
        return len(self.masked) + len(self.readonly) >= MAX_MOUNTS

    def walk(self) -> None:
        """Walk breadth first: a big tree cannot use up the bound before files near the root."""
        queue: deque[str] = deque([""])
        while queue:
            rel = queue.popleft()
            try:
                with os.scandir(self.root / rel if rel else self.root) as listing:
                    entries = sorted(listing, key=lambda e: e.name)
            except OSError:
                continue
            for entry in entries:
                self._entries += 1
                if self._entries > MAX_ENTRIES or self._full():
                    return
                path = f"{rel}/{entry.name}" if rel else entry.name
                try:
                    is_dir = entry.is_dir(follow_symlinks=False)
                    is_file = entry.is_file(follow_symlinks=False)
                except OSError:
                    continue
                if is_dir and entry.name == _GIT:
                    self._git(path)
                elif is_dir and entry.name in _DEPENDENCIES:
                    continue
                elif is_dir and not self._guard(path, directory=True):
                    queue.append(path)
                elif is_file:
                    self._guard(path, directory=False)

    def _git(self, path: str) -> None:
        """A repository's directory: only its config and hooks matter, and it can be huge."""
        for name in ("config", "hooks"):
            inner = self.root / path / name
            if not inner.is_symlink() and inner.exists() and not self._full():
                self._guard(f"{path}/{name}", directory=inner.is_dir())

    def _guard(self, rel: str, *, directory: bool) -> bool:
        """Guard one path; True when it is one the host runs (a directory is not walked then).

        A directory counts when what it holds is run (`.git/hooks/*`), and only a rule naming
        `DIR/*` exactly lets commands write it. A file a deny rule keeps from reading is masked,
        which also keeps it from being changed.
        """
        named = f"{rel}/*" if directory else rel
        probe = f"{rel}/x" if directory else rel
        runs = _HOST_RUN.maybe(probe) and host_executed(probe) is not None
        denied = not directory and self._denies.maybe(rel)
        kept = (
            not directory
            and self._write_denies.maybe(rel)
            and _named_deny(self.policy, Act.WRITE, rel)
        )
        if not runs and not denied and not kept:
            return False
        if runs and self.policy.check(Act.WRITE, named) is Effect.ALLOW:
            return True
        # Only what a rule names: a default deny of reads (with allow rules) would mask the tree.
        if denied and _named_deny(self.policy, Act.READ, rel):
            self.masked.append(rel)
        elif runs or kept:
            # A file a `write deny` rule names (a gate's own tests) is read-only for commands
            # too, and its directories are pinned so it cannot be renamed out of the way.
            self.readonly.append(rel)
        if runs or kept:
            self.protected.append(rel)
        return runs


def _named_deny(policy: Policy, act: Act, rel: str) -> bool:
    verdict = policy.explain(act, rel)
    return verdict.effect is Effect.DENY and verdict.rule is not None

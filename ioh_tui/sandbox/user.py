"""Which user a command runs as when the harness runs as root, and how it gets there (`_drop.py`).

Under root every rung used to run commands as kernel uid 0, so a command read `/etc/shadow` and
any other root-only file (issue 18, item 16). Now, as root, each command runs as an unprivileged
user (`IOH_TUI_SANDBOX_ROOT_USER`):

- `auto` (the default): the owner of the working directory when that is not root (a root harness
  over a user's checkout runs the user's commands as the user), else `nobody`;
- a user name or a uid: that user;
- `root`: uid 0, as before (the command can then read every root-only file).

The working directory and the writable roots stay writable through an idmapped view (the owner of
each is seen as the command's user), so what a command creates there is stored as the owner of
that directory: root's in a root-owned workspace, the user's in the user's. Directories the user
cannot search on the way to them (`/root`, mode 0700) are covered by an empty tmpfs showing only
the directories under it that lead to the workspace and to what the command needs to start (the
interpreter, the PATH directories: `~/.pyenv` whole, say).
The drop itself happens in the command's forked child before it execs the rung's wrapper
(`_drop.py`), so it costs a few system calls, not a process.
"""

from __future__ import annotations

import functools
import grp
import os
import pwd
import shutil
import stat
import sys
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import ioh_tui.sandbox._drop as _drop
from ioh_tui.core.errors import SandboxError

ROOT_USER_ENV = "IOH_TUI_SANDBOX_ROOT_USER"
"""`auto`, `root`, a user name or a uid (see the module docstring)."""

SETUP_FAILED = _drop.SETUP_FAILED
SETUP_LINE = _drop.SETUP_LINE

_NOBODY = 65534
_namespaces: dict[tuple[int, int, int, int], int] = {}
"""Idmapping user namespaces made so far, by (owner uid, owner gid, user uid, user gid)."""
_lock = threading.Lock()

_refused: dict[str, str] = {}
"""Rungs (backend names) whose probe found that they cannot drop here, with why."""


@dataclass(frozen=True, slots=True)
class User:
    """The unprivileged user a command runs as."""

    uid: int
    gid: int
    name: str


@dataclass(frozen=True, slots=True)
class Bind:
    """A directory mounted back at its own path in the command's view."""

    path: str
    owner: tuple[int, int] | None
    """(uid, gid) seen as the command's: a writable root. None: only reached, read-only."""


@dataclass(frozen=True, slots=True)
class Drop:
    """How one command reaches its user: the binds and the covered directories."""

    user: User
    binds: tuple[Bind, ...]
    covers: tuple[str, ...]
    cwd: str

    def preexec(self) -> Callable[[], None]:
        """The child-side drop for one command (`_drop.dropper`), run after its rlimits."""
        binds = [
            (b.path, _namespace(b.owner, self.user) if b.owner else None, b.owner is None)
            for b in self.binds
        ]
        return _drop.dropper(self.user.uid, self.user.gid, binds, self.covers, self.cwd)

    def reaches(self, path: str | os.PathLike[str]) -> bool:
        """Whether the command's user can reach `path` (search every directory above it).

        A wrapper running as that user can mount nothing where it cannot reach; nor can the
        command read anything there, so a mask there is not needed.
        """
        target = Path(path)
        for directory in reversed(target.parents):
            if not self._searchable(directory):
                return False
        return self._shown(str(target))

    def _shown(self, path: str) -> bool:
        """Whether `path` is in the view at all: a cover shows only its binds and their parents."""
        if not any(_within(path, c) for c in self.covers):
            return True
        return any(_within(path, b.path) or _within(b.path, path) for b in self.binds)

    def keep(self, paths: Iterable[str]) -> list[str]:
        """The paths of `paths` the command's user can reach (see `reaches`)."""
        return [p for p in paths if self.reaches(p)]

    def _searchable(self, directory: Path) -> bool:
        text = str(directory)
        bind = _innermost(self.binds, text)
        if bind is None and any(_within(text, c) for c in self.covers):
            # A skeleton directory of a cover (mode 0755) if a bind lies below it; else hidden.
            return self._shown(text)
        try:
            st = os.stat(directory)
        except OSError:
            return False
        uid, gid = st.st_uid, st.st_gid
        if bind is not None and bind.owner is not None:
            uid = _swapped(uid, bind.owner[0], self.user.uid)
            gid = _swapped(gid, bind.owner[1], self.user.gid)
        return _may_search(st.st_mode, uid, gid, self.user)


def _namespace(owner: tuple[int, int], user: User) -> int:
    """The user namespace that shows `owner` as `user` (made once per process, then kept)."""
    key = (*owner, user.uid, user.gid)
    with _lock:
        if key not in _namespaces:
            sleep = shutil.which("sleep") or "/bin/sleep"
            maps = (_drop.swap_map(owner[0], user.uid), _drop.swap_map(owner[1], user.gid))
            _namespaces[key] = _drop.user_namespace(*maps, sleep)
        return _namespaces[key]


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _innermost(binds: Sequence[Bind], path: str) -> Bind | None:
    holding = [b for b in binds if _within(path, b.path)]
    return max(holding, key=lambda b: len(b.path)) if holding else None


def _swapped(value: int, a: int, b: int) -> int:
    return b if value == a else a if value == b else value


def _may_search(mode: int, uid: int, gid: int, user: User) -> bool:
    if uid == user.uid:
        return bool(mode & stat.S_IXUSR)
    if gid == user.gid:
        return bool(mode & stat.S_IXGRP)
    return bool(mode & stat.S_IXOTH)


def setting() -> str:
    """The configured `root_user` (`auto` when unset)."""
    return os.environ.get(ROOT_USER_ENV, "").strip() or "auto"


def command_user(cwd: Path) -> User | None:
    """The user a command in `cwd` runs as, or None when it keeps the harness's uid.

    None when the harness is not root (nothing changes), off Linux, or with `root_user = root`.

    Raises:
        SandboxError: `root_user` names no user on this machine.
    """
    if not sys.platform.startswith("linux") or os.geteuid() != 0:
        return None
    chosen = setting()
    if chosen == "root":
        return None
    if chosen == "auto":
        st = cwd.stat()
        return _by_uid(st.st_uid, st.st_gid) if st.st_uid != 0 else _nobody()
    user = _named(chosen)
    return None if user.uid == 0 else user


def _by_uid(uid: int, fallback_gid: int) -> User:
    try:
        entry = pwd.getpwuid(uid)
    except KeyError:
        return User(uid, fallback_gid, str(uid))
    return User(uid, entry.pw_gid, entry.pw_name)


@functools.cache
def _nobody() -> User:
    try:
        entry = pwd.getpwnam("nobody")
    except KeyError:
        return User(_NOBODY, _NOBODY, "nobody")
    gid = entry.pw_gid
    for name in ("nogroup", "nobody"):
        try:
            gid = grp.getgrnam(name).gr_gid
            break
        except KeyError:
            continue
    return User(entry.pw_uid, gid, "nobody")


def _named(value: str) -> User:
    if value.isdigit():
        return _by_uid(int(value), int(value))
    try:
        entry = pwd.getpwnam(value)
    except KeyError:
        raise SandboxError(
            f"{ROOT_USER_ENV}={value!r}: no such user (use auto, root, a user name or a uid)"
        ) from None
    return User(entry.pw_uid, entry.pw_gid, entry.pw_name)


def setup_error(backend: str, line: str) -> SandboxError:
    """The error for a command whose drop failed (`_drop.SETUP_LINE`): it ran nothing."""
    return SandboxError(
        f"{backend}: {line.strip()} (nothing ran; {ROOT_USER_ENV}=root runs commands as root)"
    )


def refuse(backend: str, why: str) -> None:
    """Record that `backend` cannot drop here (its probe found so); it then keeps uid 0."""
    _refused[backend] = why


def refused(backend: str) -> str | None:
    """Why `backend` cannot drop here, or None."""
    return _refused.get(backend)


def plan(backend: str, cwd: Path, writable: Sequence[Path]) -> Drop | None:
    """How a command of `backend` in `cwd` reaches its user, or None when it keeps the harness's.

    Raises:
        SandboxError: `root_user` names no user on this machine.
    """
    if backend in _refused:
        return None
    user = command_user(cwd)
    if user is None:
        return None
    binds: list[Bind] = []
    for root in dict.fromkeys([cwd, *writable]):
        st = root.stat()
        binds.append(Bind(str(root), (st.st_uid, st.st_gid)))
    for needed in _needed_dirs():
        if any(_within(needed, b.path) for b in binds):
            continue
        blocked = _last_blocked(Path(needed), user)
        if blocked is None:
            continue  # the user reaches it as it is
        # The whole directory under the (last) closed one (`~/.pyenv`, not `~/.pyenv/shims`): a
        # launcher on PATH (a pyenv shim) runs what lies beside it.
        top = str(Path(blocked) / Path(needed).relative_to(blocked).parts[0])
        binds = [b for b in binds if b.owner or not _within(b.path, top)]
        if not any(_within(top, b.path) for b in binds):
            binds.append(Bind(top, None))
    binds.sort(key=lambda b: b.path.count("/"))  # parents before children
    covers: list[str] = []
    for bind in binds:
        blocked = _first_blocked(Path(bind.path), user, binds)
        if blocked is not None and not any(_within(blocked, c) for c in covers):
            covers = [c for c in covers if not _within(c, blocked)] + [blocked]
    return Drop(user, tuple(binds), tuple(covers), str(cwd))


def _last_blocked(path: Path, user: User) -> str | None:
    """The innermost directory above `path` the user cannot search, or None."""
    for directory in path.parents:
        try:
            st = os.stat(directory)
        except OSError:
            return None
        if not _may_search(st.st_mode, st.st_uid, st.st_gid, user):
            return str(directory)
    return None


def _first_blocked(path: Path, user: User, binds: Sequence[Bind]) -> str | None:
    """The outermost directory above `path` the user cannot search (outside every bind)."""
    for directory in reversed(path.parents):
        text = str(directory)
        if any(_within(text, b.path) for b in binds):
            return None  # inside another bind, which is searched on its own terms
        try:
            st = os.stat(directory)
        except OSError:
            return None
        if not _may_search(st.st_mode, st.st_uid, st.st_gid, user):
            return text
    return None


TOOLCHAIN_HOMES = (("RUSTUP_HOME", ".rustup"), ("CARGO_HOME", ".cargo"))
"""Where launchers on PATH find their toolchains (rustup's proxies in `~/.cargo/bin` read
`~/.rustup`): made reachable, read-only, with the PATH directories."""


def _needed_dirs() -> tuple[str, ...]:
    """What every command needs to start: this interpreter, its installation, PATH, toolchains."""
    home = os.environ.get("HOME", "")
    homes = [
        os.environ.get(var) or (os.path.join(home, name) if home else "")
        for var, name in TOOLCHAIN_HOMES
    ]
    return _needed_for(os.environ.get("PATH", ""), tuple(homes))


@functools.lru_cache(maxsize=8)
def _needed_for(path_env: str, homes: tuple[str, ...]) -> tuple[str, ...]:
    source = str(Path(_drop.__file__).resolve().parents[2])  # the folder holding ioh_tui
    entries = (
        sys.prefix,
        sys.exec_prefix,
        sys.base_prefix,
        os.path.dirname(os.path.realpath(sys.executable)),
        source,
        *path_env.split(os.pathsep),
        *homes,
    )
    found: list[str] = []
    for entry in entries:
        if entry and os.path.isabs(entry):
            real = os.path.realpath(entry)
            if os.path.isdir(real) and real != "/":
                found.append(real)
    ordered = sorted(set(found), key=len)
    return tuple(p for i, p in enumerate(ordered) if not any(_within(p, q) for q in ordered[:i]))

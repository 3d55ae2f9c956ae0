"""Paths resolved beneath the workspace root through directory descriptors, never twice by name.

A path checked as a string and opened again by name later can be raced: between the check and the
open, another process swaps a directory for a symlink that points outside, and the write lands
there. Here every component is opened relative to the descriptor of its parent with `O_NOFOLLOW`,
so what is opened is what was checked. A symlink met on the way is read (`readlink` does not follow)
and its text is walked the same way, which keeps links that stay inside the root working and
refuses any that leaves it. The caller then reads or writes through the descriptor it holds.

Above the root (an absolute link, or `..` past the root) the walk is lexical over the root's own
canonical path, which has no symlinks (`Workspace.at` resolved it): re-entering the root by its
name is the only way back in; anything else is outside.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ioh_tui.tools.workspace import SKIP_DIRS, Escape

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_MAX_PATH = 4096
"""The longest relative path walked (the kernel's PATH_MAX: a walk by components has none)."""
_MAX_LINKS = 40
"""Symlinks followed in one walk before it is called a loop (the kernel's own limit)."""


@dataclass(slots=True)
class Spot:
    """Where a path lands: an open directory and a name in it (`""`: the directory itself).

    The name is never a symlink at the time of the walk; open it with `O_NOFOLLOW` (a swap after
    the walk then fails instead of being followed). Close the spot when done.
    """

    dir_fd: int
    name: str
    real: str
    """The path relative to the root with every symlink resolved (`""`: the root)."""

    def close(self) -> None:
        """Release the directory descriptor."""
        with contextlib.suppress(OSError):
            os.close(self.dir_fd)

    def __enter__(self) -> Spot:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def locate(root: Path, rel: str, *, make_dirs: bool = False) -> Spot:
    """Walk `rel` beneath `root`, following only symlinks that stay inside it.

    Args:
        root: the canonical workspace root.
        rel: a normalised relative path (`Workspace.normalise`).
        make_dirs: create missing directories on the way (for a write); the last name may be
            missing whatever this says.

    Raises:
        Escape: the path (or a symlink on it) leaves the root, or links loop.
        FileNotFoundError: a directory on the way is missing.
        NotADirectoryError: a component on the way is not a directory.
    """
    if len(rel.encode("utf-8", "surrogateescape")) > _MAX_PATH:
        raise OSError(errno.ENAMETOOLONG, "the path is too long", rel[:80])
    walk = _Walk(root, rel, make_dirs)
    try:
        return walk.run()
    except BaseException:
        walk.release()
        raise


class _Walk:
    """One walk's state: the physical path so far, and a descriptor per component below the root.

    `fds` is empty while the walk is lexical (above the root); otherwise `fds[0]` is the root
    and `fds[-1]` the directory reached.
    """

    def __init__(self, root: Path, rel: str, make_dirs: bool) -> None:
        self.root = root
        self.rel = rel
        self.make_dirs = make_dirs
        self.top = root.parts[1:]
        self.path: list[str] = list(self.top)
        self.fds: list[int] = [os.open(root, _DIR_FLAGS)]
        self.queue = deque(part for part in rel.split("/") if part)
        self.links = 0

    def run(self) -> Spot:
        while self.queue:
            name = self.queue.popleft()
            if name in ("", "."):
                continue
            if name == "..":
                if self.fds:  # below the root: drop a directory (at the root: go lexical)
                    os.close(self.fds.pop())
                if self.path:
                    self.path.pop()
                continue
            if not self.fds:
                self._lexical(name)
                continue
            spot = self._step(name, last=not self.queue)
            if spot is not None:
                return spot
        if not self.fds:
            raise Escape(f"{self.rel!r} resolves outside the workspace root")
        return self._spot("")

    def _lexical(self, name: str) -> None:
        """Above the root: only the root's own next name leads back in."""
        depth = len(self.path)
        if (
            depth < len(self.top)
            and self.path == list(self.top[:depth])
            and self.top[depth] == name
        ):
            self.path.append(name)
            if len(self.path) == len(self.top):
                self.fds = [os.open(self.root, _DIR_FLAGS)]
            return
        raise Escape(f"{self.rel!r} resolves outside the workspace root")

    def _step(self, name: str, *, last: bool) -> Spot | None:
        """Enter `name` (a directory), follow it (a symlink), or end on it (a file, or missing)."""
        try:
            fd = os.open(name, _DIR_FLAGS, dir_fd=self.fds[-1])
        except FileNotFoundError:
            if last:
                return self._spot(name)
            if not self.make_dirs:
                raise
            with contextlib.suppress(FileExistsError):
                os.mkdir(name, dir_fd=self.fds[-1])
            self.queue.appendleft(name)
            return None
        except OSError as exc:
            if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
                raise
            try:
                target = os.readlink(name, dir_fd=self.fds[-1])
            except OSError:  # not a link: a file (or a link swapped back meanwhile)
                if last:
                    return self._spot(name)
                raise NotADirectoryError(errno.ENOTDIR, "not a directory", name) from None
            self._follow(target)
            return None
        self.fds.append(fd)
        self.path.append(name)
        return None

    def _follow(self, target: str) -> None:
        self.links += 1
        if self.links > _MAX_LINKS:
            raise Escape(f"{self.rel!r} has too many levels of symlinks")
        if target.startswith("/"):
            self.release()
            self.path = []
        self.queue.extendleft(reversed(target.split("/")))

    def _spot(self, name: str) -> Spot:
        for fd in self.fds[:-1]:
            os.close(fd)
        dir_fd = self.fds[-1]
        self.fds = []
        real = "/".join([*self.path[len(self.top) :], *([name] if name else [])])
        return Spot(dir_fd, name, real)

    def release(self) -> None:
        """Close every descriptor the walk holds."""
        for fd in self.fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        self.fds = []


def open_in(spot: Spot, flags: int = os.O_RDONLY) -> int:
    """Open what the spot names without following a symlink (a directory spot: the directory)."""
    if not spot.name:
        return os.open(".", flags | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=spot.dir_fd)
    # O_NONBLOCK: a FIFO planted in the workspace must not hang the tool on open.
    return os.open(
        spot.name, flags | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, dir_fd=spot.dir_fd
    )


class TooLarge(Exception):
    """A file over the read ceiling; nothing of it was read."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(f"{size:,} bytes is over the {limit:,}-byte ceiling")
        self.size = size
        self.limit = limit


def read_fd(fd: int, limit: int) -> bytes:
    """A regular file's bytes through its descriptor, refusing one over `limit` before reading.

    Raises:
        IsADirectoryError: the descriptor is a directory.
        TooLarge: the file is larger than `limit`.
        OSError: it is not a regular file (a FIFO, a device, a socket).
    """
    info = os.fstat(fd)
    if stat.S_ISDIR(info.st_mode):
        raise IsADirectoryError(errno.EISDIR, "is a directory")
    if not stat.S_ISREG(info.st_mode):
        raise OSError(errno.EINVAL, "not a regular file")
    if info.st_size > limit:
        raise TooLarge(info.st_size, limit)
    chunks: list[bytes] = []
    left = limit + 1  # the file may grow after fstat: never read more than the ceiling
    while left > 0:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    data = b"".join(chunks)
    if len(data) > limit:
        raise TooLarge(len(data), limit)
    return data


def names(fd: int) -> int:
    """How many names (hard links) the regular file behind `fd` has (1 for anything else).

    A file's other names can be anywhere on its filesystem, so the policy can check only this one.
    """
    info = os.fstat(fd)
    return info.st_nlink if stat.S_ISREG(info.st_mode) else 1


def read_spot(spot: Spot, limit: int) -> bytes:
    """The bytes of the file a spot names (see `read_fd`)."""
    fd = open_in(spot)
    try:
        return read_fd(fd, limit)
    finally:
        os.close(fd)


def write_spot(spot: Spot, content: str | bytes) -> None:
    """Replace the file a spot names atomically: a temporary beside it, renamed over it.

    Both live in the directory the walk checked (`dir_fd`), so the rename cannot land elsewhere; a
    crash leaves the old content or the new, never half.
    """
    if not spot.name:
        raise IsADirectoryError(errno.EISDIR, "is a directory", spot.real)
    mode = 0o644
    with contextlib.suppress(FileNotFoundError):
        info = os.stat(spot.name, dir_fd=spot.dir_fd, follow_symlinks=False)
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(errno.EISDIR, "is a directory", spot.real)
        if stat.S_ISREG(info.st_mode):
            mode = stat.S_IMODE(info.st_mode)
    tmp, fd = _temporary(spot)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(content.encode("utf-8") if isinstance(content, str) else content)
            os.fchmod(handle.fileno(), mode)
        os.rename(tmp, spot.name, src_dir_fd=spot.dir_fd, dst_dir_fd=spot.dir_fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=spot.dir_fd)
        raise


def _temporary(spot: Spot) -> tuple[str, int]:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    for _ in range(100):
        name = f".{spot.name[:200]}.{os.urandom(6).hex()}.tmp"
        try:
            return name, os.open(name, flags, 0o600, dir_fd=spot.dir_fd)
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temporary name", spot.real)


def walk_files(spot: Spot) -> Iterator[tuple[str, int, str]]:
    """Every regular file beneath a directory spot: (relative name, its directory fd, its name).

    In the order of `Workspace.walk_files` (sorted by path components). Symlinked directories are
    not entered and symlinked files are not listed; each directory is opened with `O_NOFOLLOW`
    relative to its parent, so the walk never leaves the root. A descriptor is valid only until
    the next item.
    """
    start = open_in(spot)
    try:
        yield from _walk(start, "")
    finally:
        os.close(start)


def _walk(dir_fd: int, base: str) -> Iterator[tuple[str, int, str]]:
    try:
        with os.scandir(dir_fd) as scan:
            entries = sorted((e.name, e) for e in scan)
    except OSError:
        return
    for name, entry in entries:
        try:
            if entry.is_symlink():
                continue
            if entry.is_dir(follow_symlinks=False):
                if name in SKIP_DIRS:
                    continue
                try:
                    child = os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
                except OSError:
                    continue
                try:
                    yield from _walk(child, f"{base}{name}/")
                finally:
                    os.close(child)
            elif entry.is_file(follow_symlinks=False):
                yield f"{base}{name}", dir_fd, name
        except OSError:
            continue

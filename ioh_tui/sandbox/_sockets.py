"""Host unix sockets hidden from the mount-namespace rungs.

A read-only bind does not stop `connect()`: the kernel checks only the socket file's permission
bits, never whether its mount is read-only, so `/run/docker.sock`, the D-Bus and systemd sockets
and agents in `/run/user/N` stay reachable through `--ro-bind / /`. As root each of them is a way
out of the sandbox. Two layers close that:

- the runtime directories (`/run`, `/var/run`, `$XDG_RUNTIME_DIR`) are covered by an empty
  read-only tmpfs when the network is denied (with the network allowed they stay, because name
  resolution may live there: `/etc/resolv.conf` is often a link into `/run`);
- every pathname socket bound on the host when the command starts (the kernel lists them in
  `/proc/net/unix`) is covered by `/dev/null`, on every network setting: a connect then fails
  with ECONNREFUSED.

Abstract sockets belong to a network namespace, so the private one of a network-denied command
already hides them. A socket bound after the command started, or in another network namespace,
is not in the list: docs/sandbox.md says what each rung guarantees.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from pathlib import Path

RUNTIME_DIRS = ("/run", "/var/run")

MAX_SOCKET_MASKS = 512
"""Each mask is one mount; a host with more bound sockets than this gets the first ones masked
(the runtime directories, where nearly all of them live, are masked as a whole)."""

_PROC_NET_UNIX = "/proc/net/unix"


def runtime_dirs(keep: Sequence[Path]) -> list[str]:
    """Real runtime directories to cover, parents only; one that holds a kept path is skipped."""
    candidates = [*RUNTIME_DIRS, os.environ.get("XDG_RUNTIME_DIR", "")]
    found: list[str] = []
    for entry in candidates:
        if not entry or not os.path.isabs(entry):
            continue
        real = os.path.realpath(entry)
        if not os.path.isdir(real) or real in found or _private(real):
            continue
        if any(k == Path(real) or Path(real) in k.parents for k in keep):
            continue
        found.append(real)
    ordered = sorted(found, key=len)
    return [p for i, p in enumerate(ordered) if not _under_any(p, ordered[:i])]


def bound_sockets(
    hidden: Sequence[str], keep: Sequence[Path], path: str = _PROC_NET_UNIX
) -> list[str]:
    """Pathname sockets bound on the host now, outside `hidden` and the sandbox's private dirs.

    Args:
        hidden: directories already covered as a whole (the runtime directories).
        keep: the working directory and writable roots: bound back into the sandbox, so a socket
            in one of them is masked even under /tmp.
        path: the kernel's socket table (a parameter for the tests).

    Returns:
        Real paths of existing socket files, at most `MAX_SOCKET_MASKS` of them.
    """
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as table:
            lines = table.read().splitlines()[1:]
    except OSError:
        return []
    found: dict[str, None] = {}
    for line in lines:
        fields = line.split(None, 7)
        # Num RefCount Protocol Flags Type St Inode [Path]; an abstract name starts with '@', and
        # a socket bound by a relative name cannot be located (docs/sandbox.md).
        if len(fields) < 8 or not fields[7].startswith("/"):
            continue
        real = os.path.realpath(fields[7])
        if real in found or _under_any(real, hidden):
            continue
        if _private(real) and not _under_any(real, [str(k) for k in keep]):
            continue
        try:
            if not stat.S_ISSOCK(os.lstat(real).st_mode):
                continue
        except OSError:
            continue
        found[real] = None
        if len(found) >= MAX_SOCKET_MASKS:
            break
    return list(found)


def _private(path: str) -> bool:
    """Inside a directory every mount-namespace rung replaces with its own (nothing to mask)."""
    return _under_any(path, ("/tmp", "/dev", "/proc"))


def _under_any(path: str, roots: Sequence[str]) -> bool:
    return any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots)

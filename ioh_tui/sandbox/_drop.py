"""The system calls a root harness's command makes before it execs its rung's wrapper (item 16).

Called in the forked child (`preexec_fn`, `_env.child_setup`), as root, so it costs no extra
process: a uid inside a user namespace that root creates still maps to 0 outside it, so the
drop has to happen before the rung's wrapper (bubblewrap, util-linux `unshare`, the floor's
subreaper) starts. In the child it:

1. enters a private mount namespace (propagation private, so nothing reaches the host);
2. clones each bind (the working directory and the writable roots, then directories the command
   must reach such as the interpreter) with `open_tree`, and gives each writable one an idmapped
   view (`MOUNT_ATTR_IDMAP`): its owner is seen as the command's uid and what the command creates
   is stored as its owner's. Files on disk keep the owner they had;
3. covers each directory the command's uid cannot search on the way to a bind (`/root`, mode
   0700, above an interpreter or a workspace) with an empty tmpfs, and mounts the clones back at
   their own paths (read-only for the directories that are only reached), then enters the
   working directory again (the one inherited is the mount underneath);
4. drops every supplementary group, then to the command's gid and uid (real, effective and saved),
   and sets the parent-death signal again (a uid change clears it).

Any failure writes one line starting `ioh-sandbox: cannot run commands as uid` on the child's
stderr and exits 125 there: the parent sees a command that failed to set up, never one that
quietly kept uid 0.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
from collections.abc import Callable, Sequence

# The launcher's ctypes plumbing (it stays standalone; this module is the harness's).
from ioh_tui.sandbox._ns_launcher import _check, _libc, _mount, _MountAttr

SETUP_FAILED = 125
SETUP_LINE = "ioh-sandbox: cannot run commands as uid "

_CLONE_NEWNS = 0x00020000
_CLONE_NEWUSER = 0x10000000
_MS_NOSUID = 0x2
_MS_NODEV = 0x4
_MS_REC = 0x4000
_MS_PRIVATE = 1 << 18
_AT_FDCWD = -100
_AT_EMPTY_PATH = 0x1000
_OPEN_TREE_CLONE = 1
_MOVE_MOUNT_F_EMPTY_PATH = 0x4
_MOUNT_ATTR_RDONLY = 0x1
_MOUNT_ATTR_IDMAP = 0x00100000
# The mount API's numbers are the same on every architecture (new syscalls are unified).
_SYS_OPEN_TREE = 428
_SYS_MOVE_MOUNT = 429
_SYS_MOUNT_SETATTR = 442
_PR_SET_PDEATHSIG = 1
_ID_MAX = 4294967295
"""(uid_t)-1 is never a valid id, so a map covers 0 .. 2**32 - 2."""

Bound = tuple[str, int | None, bool]
"""(path, descriptor of the idmapping user namespace or None, read-only)."""


def swap_map(a: int, b: int) -> str:
    """A uid_map (or gid_map) that swaps `a` and `b` and maps every other id to itself."""
    if a == b:
        return f"0 0 {_ID_MAX}\n"
    low, high = min(a, b), max(a, b)
    lines = [f"0 0 {low}"] if low else []
    lines.append(f"{low} {high} 1")
    if high - low > 1:
        lines.append(f"{low + 1} {low + 1} {high - low - 1}")
    lines.append(f"{high} {low} 1")
    if high + 1 < _ID_MAX:
        lines.append(f"{high + 1} {high + 1} {_ID_MAX - high - 1}")
    return "\n".join(lines) + "\n"


def user_namespace(uid_map: str, gid_map: str, sleep: str) -> int:
    """A descriptor of a new user namespace with these maps (made once, in the harness).

    A `sleep` child creates it (only a process can own a new namespace); its maps are written
    from here, which holds CAP_SETUID in the parent namespace, then the child is ended. The
    namespace lives as long as the descriptor.
    """

    def enter() -> None:
        _check(_libc.unshare(_CLONE_NEWUSER), "unshare user namespace")

    child = subprocess.Popen([sleep, "60"], preexec_fn=enter, close_fds=True)
    try:
        with open(f"/proc/{child.pid}/uid_map", "w") as f:
            f.write(uid_map)
        with open(f"/proc/{child.pid}/gid_map", "w") as f:
            f.write(gid_map)
        return os.open(f"/proc/{child.pid}/ns/user", os.O_RDONLY | os.O_CLOEXEC)
    finally:
        child.kill()
        child.wait()


def _setattr(fd: int, path: str, attr: _MountAttr, what: str) -> None:
    res = _libc.syscall(
        _SYS_MOUNT_SETATTR,
        ctypes.c_int(fd),
        path.encode(),
        ctypes.c_uint(_AT_EMPTY_PATH if not path else 0),
        ctypes.byref(attr),
        ctypes.c_size_t(ctypes.sizeof(attr)),
    )
    _check(res, what)


def _clone(path: str) -> int:
    flags = ctypes.c_uint(_OPEN_TREE_CLONE | os.O_CLOEXEC)
    fd: int = _libc.syscall(_SYS_OPEN_TREE, _AT_FDCWD, path.encode(), flags)
    _check(fd, f"clone {path}")
    return fd


def _attach(fd: int, path: str) -> None:
    res = _libc.syscall(
        _SYS_MOVE_MOUNT,
        ctypes.c_int(fd),
        b"",
        ctypes.c_int(_AT_FDCWD),
        path.encode(),
        ctypes.c_uint(_MOVE_MOUNT_F_EMPTY_PATH),
    )
    _check(res, f"mount {path}")


def _setup(binds: Sequence[Bound], covers: Sequence[str], cwd: str) -> None:
    """Steps 1-3 of the module docstring (as root)."""
    _check(_libc.unshare(_CLONE_NEWNS), "unshare mount namespace")
    _mount("none", "/", None, _MS_REC | _MS_PRIVATE, None)
    clones: list[tuple[str, int, bool]] = []
    for path, userns, readonly in binds:
        fd = _clone(path)
        if userns is not None:
            idmap = _MountAttr(_MOUNT_ATTR_IDMAP, 0, 0, userns)
            _setattr(fd, "", idmap, f"idmapped mount of {path}")
        clones.append((path, fd, readonly))
    for cover in covers:
        _mount("tmpfs", cover, "tmpfs", _MS_NOSUID | _MS_NODEV, "mode=0755,size=64k")
    for path, fd, readonly in clones:
        os.makedirs(path, exist_ok=True)  # only creates anything under a fresh cover
        _attach(fd, path)
        os.close(fd)
        if readonly:
            _setattr(_AT_FDCWD, path, _MountAttr(_MOUNT_ATTR_RDONLY, 0, 0, 0), f"read-only {path}")
    os.chdir(cwd)


def _become(uid: int, gid: int, parent: int) -> None:
    """Step 4: drop to `uid`/`gid` for good, keep dying with `parent`."""
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)
    if os.getresuid() != (uid, uid, uid) or os.getresgid() != (gid, gid, gid):
        raise OSError(0, f"still uid {os.geteuid()} after the drop")
    _check(_libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "parent-death signal")
    if os.getppid() != parent:
        raise OSError(0, "the harness ended before the command started")


def dropper(
    uid: int, gid: int, binds: Sequence[Bound], covers: Sequence[str], cwd: str
) -> Callable[[], None]:
    """The child-side steps, frozen for one command (called after the rlimits are set)."""
    frozen = (tuple(binds), tuple(covers))
    parent = os.getpid()

    def drop() -> None:
        try:
            _setup(frozen[0], frozen[1], cwd)
            _become(uid, gid, parent)
        except OSError as exc:
            os.write(2, f"{SETUP_LINE}{uid}: {exc.strerror or exc}\n".encode(errors="replace"))
            os._exit(SETUP_FAILED)

    return drop

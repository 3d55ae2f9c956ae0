"""In-namespace setup for `linux-namespaces`: `python -I -S _ns_launcher.py CONFIG -- ARGV`.

Standalone on purpose (standard library only, no ioh_tui import): it starts inside fresh user,
mount and PID namespaces created by util-linux `unshare`, as PID 1, and:

1. makes every mount read-only in one step (`mount_setattr(AT_RECURSIVE, MOUNT_ATTR_RDONLY)`;
   util-linux 2.38 cannot do this from a shell, and remounting mount by mount would miss any
   mount point whose name needs escaping);
2. mounts private tmpfs on /tmp and /dev/shm;
3. binds the working directory and the writable roots back read-write (through O_PATH
   descriptors opened before /tmp was covered, so a workspace under /tmp is still reachable);
4. masks the host's unix sockets (`_sockets`), the credential stores `_masks` lists and the
   harness's own files (`hidden`); pins and protects what the policy's guard names;
5. brings the namespace's loopback up (so a test suite can use its own 127.0.0.1);
6. forks the payload, which drops every capability, installs the seccomp deny-list and execs ARGV
   (never through a shell); PID 1 stays behind to reap orphans and reports the payload's status
   as its exit status (128 + signal for a signal death). When PID 1 exits, the kernel kills every
   process left in the namespace.

A setup failure exits 125 with one line on stderr starting `ioh-sandbox:`; a payload that
cannot be executed exits 127 with a line starting `ioh-sandbox: exec`.

It starts once per command, so it imports as little as it can: its configuration comes as
`marshal` bytes (built in; the harness starts it with its own interpreter, so the format
matches) rather than JSON, whose decoder pulls in `re`; the loopback uses the C modules behind
`socket` and `struct`; no `typing`. Its import took 33 ms more than `python -I -S -c pass`
here; 11 ms more since.
"""

from __future__ import annotations

import _socket
import _struct
import ctypes
import fcntl
import marshal
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NoReturn

SETUP_FAILED = 125
EXEC_FAILED = 127

_AT_FDCWD = -100
_AT_RECURSIVE = 0x8000
_MOUNT_ATTR_RDONLY = 0x1
_SYS_MOUNT_SETATTR = 442  # the same number on every architecture (new syscalls are unified)
_MS_RDONLY = 0x1
_MS_NOSUID = 0x2
_MS_NODEV = 0x4
_MS_BIND = 0x1000
_PR_CAPBSET_DROP = 24
_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2
_PR_CAP_AMBIENT = 47
_PR_CAP_AMBIENT_CLEAR_ALL = 4
_SIOCGIFFLAGS = 0x8913
_SIOCSIFFLAGS = 0x8914
_IFF_UP = 0x1

_libc = ctypes.CDLL(None, use_errno=True)


class _MountAttr(ctypes.Structure):
    _fields_ = (
        ("attr_set", ctypes.c_uint64),
        ("attr_clr", ctypes.c_uint64),
        ("propagation", ctypes.c_uint64),
        ("userns_fd", ctypes.c_uint64),
    )


class _SockFprog(ctypes.Structure):
    _fields_ = (("len", ctypes.c_ushort), ("filter", ctypes.c_void_p))


def _check(result: int, what: str) -> None:
    if result < 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _setattr(path: str, flags: int, attr_set: int, attr_clr: int) -> None:
    attr = _MountAttr(attr_set, attr_clr, 0, 0)
    res = _libc.syscall(
        _SYS_MOUNT_SETATTR,
        ctypes.c_int(_AT_FDCWD),
        path.encode(),
        ctypes.c_uint(flags),
        ctypes.byref(attr),
        ctypes.c_size_t(ctypes.sizeof(attr)),
    )
    _check(res, f"mount_setattr {path}")


def _mount(source: str, target: str, fstype: str | None, flags: int, data: str | None) -> None:
    res = _libc.mount(
        source.encode(),
        target.encode(),
        fstype.encode() if fstype else None,
        ctypes.c_ulong(flags),
        data.encode() if data else None,
    )
    _check(res, f"mount {target}")


def _setup_mounts(
    cwd: str,
    writable: list[str],
    mask_dirs: list[str],
    mask_files: list[str],
    readonly: list[str] | None = None,
    mask_runtime: list[str] | None = None,
    mask_sockets: list[str] | None = None,
    pin: list[str] | None = None,
    protect: list[str] | None = None,
) -> None:
    # Parents first, so a nested writable root is bound on top of its parent's bind.
    roots = sorted(dict.fromkeys([cwd, *writable]), key=lambda p: p.count("/"))
    handles = [(path, os.open(path, os.O_PATH | os.O_DIRECTORY)) for path in roots]
    # Directories under /tmp that must stay visible once /tmp is private (this interpreter's).
    kept = [(path, os.open(path, os.O_PATH | os.O_DIRECTORY)) for path in readonly or []]
    _setattr("/", _AT_RECURSIVE, _MOUNT_ATTR_RDONLY, 0)
    private = _MS_NOSUID | _MS_NODEV
    _mount("tmpfs", "/tmp", "tmpfs", private, "mode=1777")
    if os.path.isdir("/dev/shm"):
        _mount("tmpfs", "/dev/shm", "tmpfs", private, "mode=1777")
    for path, fd in kept:
        os.makedirs(path, exist_ok=True)  # only creates anything under the fresh /tmp
        _mount(f"/proc/self/fd/{fd}", path, None, _MS_BIND, None)
        _setattr(path, 0, _MOUNT_ATTR_RDONLY, 0)
        os.close(fd)
    for path, fd in handles:
        os.makedirs(path, exist_ok=True)  # only creates anything under the fresh /tmp
        _mount(f"/proc/self/fd/{fd}", path, None, _MS_BIND, None)
        _setattr(path, 0, 0, _MOUNT_ATTR_RDONLY)
        os.close(fd)
    # The policy's guard: directories pinned (a mount point cannot be renamed away), then the
    # files the host runs bound read-only onto themselves.
    for path in pin or []:
        _mount(path, path, None, _MS_BIND, None)
    for path in protect or []:
        _mount(path, path, None, _MS_BIND, None)
        _setattr(path, 0, _MOUNT_ATTR_RDONLY, 0)
    # Host unix sockets: connect() ignores a read-only mount, so the runtime directories get an
    # empty read-only tmpfs and every other bound socket /dev/null (before the credential masks,
    # which could otherwise hide a socket's mount point).
    for path in mask_runtime or []:
        _mount("tmpfs", path, "tmpfs", private | _MS_RDONLY, "mode=0755,size=4k")
    for path in mask_sockets or []:
        _mount("/dev/null", path, None, _MS_BIND, None)
    # Credential stores: an empty read-only tmpfs over directories, /dev/null over files.
    for path in mask_dirs:
        _mount("tmpfs", path, "tmpfs", private | _MS_RDONLY, "mode=0700,size=4k")
    for path in mask_files:
        _mount("/dev/null", path, None, _MS_BIND, None)


def _loopback_up() -> None:
    sock = _socket.socket(_socket.AF_INET, _socket.SOCK_DGRAM)
    try:
        ifreq = _struct.pack("16sH14x", b"lo", 0)
        flags = _struct.unpack("16sH14x", fcntl.ioctl(sock, _SIOCGIFFLAGS, ifreq))[1]
        fcntl.ioctl(sock, _SIOCSIFFLAGS, _struct.pack("16sH14x", b"lo", flags | _IFF_UP))
    finally:
        sock.close()


def _drop_privileges(seccomp: bytes | None) -> None:
    # Namespace root would otherwise keep CAP_SYS_ADMIN over this namespace's mounts and could
    # simply remount / read-write. An empty bounding set means exec grants no capability back.
    with open("/proc/sys/kernel/cap_last_cap") as f:
        last = int(f.read())
    for cap in range(last + 1):
        _check(_libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0), "drop capability")
    _libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    _check(_libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    if seccomp:
        buf = ctypes.create_string_buffer(seccomp, len(seccomp))
        prog = _SockFprog(len(seccomp) // 8, ctypes.cast(buf, ctypes.c_void_p))
        _check(
            _libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0),
            "seccomp",
        )


def _payload(argv: list[str], seccomp: bytes | None) -> None:
    try:
        _drop_privileges(seccomp)
    except OSError as exc:
        _die(SETUP_FAILED, f"ioh-sandbox: {exc}")
    try:
        os.execvp(argv[0], argv)
    except OSError as exc:
        _die(EXEC_FAILED, f"ioh-sandbox: exec {argv[0]}: {exc.strerror or exc}")


def _die(code: int, line: str) -> NoReturn:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()
    os._exit(code)


def _reap_until(child: int) -> int:
    while True:
        try:
            pid, status = os.waitpid(-1, 0)
        except InterruptedError:
            continue
        if pid == child:
            if os.WIFSIGNALED(status):
                return 128 + os.WTERMSIG(status)
            return os.waitstatus_to_exitcode(status)


def main() -> None:
    """Set up the namespace, run the payload, exit with its status."""
    config = marshal.loads(bytes.fromhex(sys.argv[1]))
    argv = sys.argv[3:]
    seccomp = config.get("seccomp")
    try:
        _setup_mounts(
            config["cwd"],
            config["writable"],
            config["mask_dirs"],
            config["mask_files"],
            config.get("readonly", []),
            config.get("mask_runtime", []),
            config.get("mask_sockets", []),
            config.get("pin", []),
            config.get("protect", []),
        )
        if config.get("loopback"):
            _loopback_up()
        os.chdir(config["cwd"])
    except OSError as exc:
        _die(SETUP_FAILED, f"ioh-sandbox: {exc}")
    child = os.fork()
    if child == 0:
        _payload(argv, seccomp)
    os._exit(_reap_until(child))


if __name__ == "__main__":
    main()

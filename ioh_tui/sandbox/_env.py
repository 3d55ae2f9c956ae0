"""The scrubbed environment every sandboxed command starts from, and the rlimits it runs under."""

from __future__ import annotations

import ctypes
import functools
import math
import os
import resource
import signal
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

from ioh_tui.core.redact import configured_keys, is_key_variable
from ioh_tui.sandbox.base import Limits

BASE_KEYS = ("PATH", "HOME", "LANG", "TERM", "TMPDIR")
"""The only variables inherited from the parent: enough to find programs, nothing that logs in."""

_PROXY_KEYS = frozenset({"http_proxy", "https_proxy", "all_proxy", "ftp_proxy", "no_proxy"})

MARKER_KEY = "IOH_SANDBOX_RUN"
"""Set to a per-run token on backends without a PID namespace, so that teardown can find
descendants that left the process tree (setsid + parent exit) by their inherited environment."""

INSIDE_ENV = {"TMPDIR": "/tmp"}
"""Overrides inside a private mount namespace: temp files go to the private tmpfs.

HOME keeps the parent's value on purpose: the home directory is visible (read-only, with
credential stores masked), and toolchain launchers resolve from it. With HOME=/tmp, rustup's
`rustc`/`cargo` proxies fail ("rustup could not choose a version"). Callers that want a throwaway
HOME pass `env={"HOME": ...}`."""

Rlimit = tuple[int, int, int]
"""(resource, soft, hard) as passed to `resource.setrlimit`."""


def scrubbed_env(
    *,
    extra: Mapping[str, str] | None,
    network: bool,
    overrides: Mapping[str, str] | None = None,
    inherit_all: bool = False,
) -> dict[str, str]:
    """Build a child's environment.

    Args:
        extra: the caller's variables, applied last (they win over everything else).
        network: when False, proxy variables are removed even if the caller passed them, because a
            proxy is a way out of a sandbox that denies the network.
        overrides: the backend's own values (e.g. `HOME=/tmp` inside a private mount namespace).
        inherit_all: copy the whole parent environment (backend `none` only), but for the keys:
            every provider key variable (`*_API_KEY`) and any variable holding a configured key
            is removed, whatever the backend.

    Returns:
        The environment mapping.
    """
    if inherit_all:
        env = dict(os.environ)
    else:
        env = {key: os.environ[key] for key in BASE_KEYS if key in os.environ}
    env.setdefault("PATH", os.defpath)
    env.setdefault("LANG", "C.UTF-8")
    env.setdefault("TERM", "dumb")
    env.update(overrides or {})
    env.update(extra or {})
    if not network:
        for key in [k for k in env if k.lower() in _PROXY_KEYS]:
            del env[key]
    # No command gets the harness's keys, on any rung (`none` inherits everything else).
    keys = configured_keys()
    for name in [k for k, v in env.items() if is_key_variable(k) or v in keys]:
        del env[name]
    return env


def address_space_bytes(limits: Limits) -> int | None:
    """The RLIMIT_AS value for `limits`, or None when no address-space limit applies."""
    if limits.address_space_mb == 0:
        return None
    if limits.address_space_mb is not None:
        return limits.address_space_mb * 1024 * 1024
    if limits.memory_mb is None:
        return None
    return (2 * limits.memory_mb + 256) * 1024 * 1024


def rlimits_for(limits: Limits) -> list[Rlimit]:
    """The rlimits that back `limits` inside the child, clamped to the parent's hard limits.

    Clamping here (in the parent) means `setrlimit` in the child cannot fail for an unprivileged
    parent; a value the kernel still refuses fails the spawn (SandboxError), never silently.

    CPU uses soft = ceil(cpu_s) and hard = soft + 1: the kernel sends SIGXCPU at the soft limit
    (a clear, classifiable death) and SIGKILL a second later if the program catches SIGXCPU.
    RLIMIT_CPU is per process; the monitor enforces `cpu_s` across the whole tree.
    """
    wanted: list[tuple[int, int | None, int]] = [(resource.RLIMIT_CORE, 0, 0)]
    if limits.cpu_s is not None:
        soft = max(1, math.ceil(limits.cpu_s))
        wanted.append((resource.RLIMIT_CPU, soft, soft + 1))
    address_space = address_space_bytes(limits)
    if address_space is not None:
        wanted.append((resource.RLIMIT_AS, address_space, address_space))
    if limits.file_size_mb is not None:
        size = limits.file_size_mb * 1024 * 1024
        wanted.append((resource.RLIMIT_FSIZE, size, size))
    if limits.open_files is not None:
        wanted.append((resource.RLIMIT_NOFILE, limits.open_files, limits.open_files))
    out: list[Rlimit] = []
    for res, soft_wanted, hard_wanted in wanted:
        _, parent_hard = resource.getrlimit(res)
        hard = (
            hard_wanted if parent_hard == resource.RLIM_INFINITY else min(hard_wanted, parent_hard)
        )
        soft = hard if soft_wanted is None else min(soft_wanted, hard)
        out.append((res, soft, hard))
    return out


def child_setup(
    rlimits: list[Rlimit], then: Callable[[], None] | None = None
) -> Callable[[], None]:
    """The `preexec_fn` for every command: rlimits, and on Linux a parent-death signal.

    `then` runs last: a root harness's drop to the command's user (`user.Drop.preexec`), which
    needs root for its mounts and sets the parent-death signal again after the uid change.

    The parent-death signal (SIGKILL when the harness dies) matters most for the namespaces
    rung: `unshare --kill-child` then takes the whole PID namespace down with it. On the floor it
    reaches only the leader; the sweep at teardown handles the rest while the harness lives.

    Why preexec_fn rather than a `prlimit` wrapper: it costs no extra exec per command and works
    wherever `resource` does. CPython documents preexec_fn as unsafe with threads because the child
    may need a lock another thread held at fork. This closure only calls `setrlimit` and `prctl`
    (both resolved in the parent; nothing is imported or allocated of note in the child), and
    spawns happen on the event-loop thread, which holds the GIL across the fork, so no
    Python-level lock can be orphaned.
    """
    frozen = tuple(rlimits)
    setrlimit = resource.setrlimit
    prctl = _prctl()

    def apply() -> None:
        if prctl is not None:
            prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        for res, soft, hard in frozen:
            setrlimit(res, (soft, hard))
        if then is not None:
            then()

    return apply


_PR_SET_PDEATHSIG = 1
_PR_SET_DUMPABLE = 4
_PR_GET_DUMPABLE = 3


def can_protect_harness() -> bool:
    """Whether `protect_harness` can work here (Linux, with prctl)."""
    return _prctl() is not None


def protect_harness() -> bool:
    """Make this process non-dumpable, so commands running as the same user cannot read it.

    On the floor and `none` a command shares the harness's user and sees its `/proc` entry:
    `/proc/<pid>/environ` holds the keys the harness was started with, `/proc/<pid>/mem` its
    memory. A non-dumpable process's entries are root's, and reading them needs the right to
    ptrace it, which an unprivileged command lacks (a command running as root keeps it). The
    flag is not inherited across `exec`, so the commands themselves are unaffected.

    Returns:
        Whether the process is non-dumpable now (False off Linux, or where prctl refuses).
    """
    prctl = _prctl()
    if prctl is None:
        return False
    if prctl(_PR_GET_DUMPABLE, 0, 0, 0, 0) == 0:
        return True
    return prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0) == 0


@functools.cache
def _prctl() -> Callable[..., int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl: Callable[..., int] = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    return prctl


@functools.lru_cache(maxsize=8)
def _under_tmp(path_env: str) -> tuple[str, ...]:
    """The real paths of the interpreter's, the source's and `path_env`'s entries under /tmp.

    Cached (as `user._needed_for` is): resolving them was most of the cost of building a
    command's options. Whether each still exists is asked again for every command, since a
    bind of a missing directory would fail it.
    """
    tmp = os.path.realpath("/tmp")
    source = str(Path(__file__).resolve().parents[2])  # the folder holding the ioh_tui package
    entries = (sys.prefix, sys.exec_prefix, sys.base_prefix, source, *path_env.split(os.pathsep))
    reals = (os.path.realpath(entry) for entry in entries if entry)
    return tuple(dict.fromkeys(real for real in reals if real.startswith(tmp + os.sep)))


def kept_under_tmp(path_env: str) -> list[str]:
    """Directories under /tmp that stay visible (read-only) though /tmp is made private.

    A private /tmp would hide this interpreter's installation when it lives there (a virtualenv
    in a checkout under /tmp, as CI clones may be) and any PATH entry there, so the commands we
    run with `sys.executable` or from PATH could not start; and an editable install's source
    (the folder holding `ioh_tui`), which the document worker imports inside the sandbox.
    """
    found = {real for real in _under_tmp(path_env) if os.path.isdir(real)}
    # Parents only: a bind of a parent already shows its children.
    ordered = sorted(found, key=len)
    return [
        p for i, p in enumerate(ordered) if not any(p.startswith(q + os.sep) for q in ordered[:i])
    ]

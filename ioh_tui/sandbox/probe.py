"""Which containment rungs work on this machine (tried for real, once per process) and `select`."""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ioh_tui.core.errors import ConfigError, SandboxError
from ioh_tui.sandbox import user
from ioh_tui.sandbox._seccomp import deny_list_program
from ioh_tui.sandbox.base import Sandbox
from ioh_tui.sandbox.bwrap import BwrapSandbox
from ioh_tui.sandbox.floor import FloorSandbox, NoneSandbox
from ioh_tui.sandbox.namespaces import NamespacesSandbox

RUNGS = ("bwrap", "namespaces", "floor", "none")
"""Strongest first; `auto` takes the first available."""

BACKENDS = {
    "bwrap": "linux-bubblewrap",
    "namespaces": "linux-namespaces",
    "floor": "portable-floor",
    "none": "none",
}


@dataclass(frozen=True, slots=True)
class Capabilities:
    """What a rung contains (what the docs promise and the escape suite checks)."""

    confines_writes: bool
    """Only the working directory, `writable` and a private /tmp can be written."""
    denies_network: bool
    """No route out, not even to the host's loopback, unless `network=True`."""
    pid_namespace: bool
    """The command cannot see or signal host processes, and dies with its namespace."""
    seccomp: bool
    """The syscall deny-list applies (x86_64 and aarch64)."""
    scrubbed_env: bool
    """Only PATH, HOME, LANG, TERM, TMPDIR and the caller's variables reach the command."""


_SECCOMP = deny_list_program() is not None

CAPABILITIES = {
    "bwrap": Capabilities(True, True, True, _SECCOMP, True),
    "namespaces": Capabilities(True, True, True, _SECCOMP, True),
    "floor": Capabilities(False, False, False, False, True),
    "none": Capabilities(False, False, False, False, False),
}
"""Per rung; seccomp holds only where `_seccomp` knows the architecture (x86_64, aarch64)."""

BWRAP_ENV = "IOH_TUI_BWRAP"
"""Overrides the bubblewrap executable (a path; `/nonexistent` makes the rung unavailable)."""

_log = logging.getLogger(__name__)
_lock = threading.Lock()
_cache: dict[str | None, ProbeReport] = {}
"""Probe results per bubblewrap path tried (None: no bubblewrap)."""


@dataclass(frozen=True, slots=True)
class ProbeReport:
    """What the probe found."""

    available: tuple[str, ...]
    """Rung names that work here, strongest first."""
    missing: dict[str, str]
    """Why each unavailable rung is unavailable (one line each)."""
    bwrap: str | None
    """The bubblewrap executable that was tried, if one was found."""


def _bwrap_path(bwrap: str | None) -> str | None:
    candidate = bwrap if bwrap is not None else os.environ.get(BWRAP_ENV)
    if candidate is None:
        return shutil.which("bwrap")
    return candidate if os.path.isfile(candidate) and os.access(candidate, os.X_OK) else None


def _try_bwrap(path: str | None) -> str | None:
    """None when bubblewrap works, else why not."""
    if path is None:
        return "bubblewrap (bwrap) not found; install the `bubblewrap` package"
    sandbox = BwrapSandbox(path)
    return _as_user(sandbox.backend, sandbox.self_test)


def _try_namespaces() -> str | None:
    return _as_user("linux-namespaces", NamespacesSandbox.self_test)


def _as_user(backend: str, self_test: Callable[..., str | None]) -> str | None:
    """Try the rung as its commands would start: as root, as the unprivileged user first.

    A rung that works only as root (no unprivileged user namespaces here, or no idmapped mounts)
    stays available and runs its commands as uid 0; `user.refused` then says why, and
    `floor.key_exposure` says so where the rung is chosen.
    """
    if user.command_user(Path(tempfile.gettempdir())) is None:
        return self_test()
    why = self_test(dropped=True)
    if why is None:
        return None
    plain = self_test()
    if plain is None:
        user.refuse(backend, why)
    return plain


def probe_report(*, bwrap: str | None = None, refresh: bool = False) -> ProbeReport:
    """Try every rung once (cached per process and per bubblewrap path) and report.

    Each rung is tested by actually starting a command under it with the restrictions it will
    use, never by reading sysctls: a kernel knob, an LSM or a container runtime can each refuse
    what the sysctls suggest is allowed.

    Args:
        bwrap: the bubblewrap executable to try (default: `$IOH_TUI_BWRAP`, then `bwrap` on PATH).
        refresh: ignore the cache.

    Returns:
        The report.
    """
    path = _bwrap_path(bwrap)
    # The result depends only on which bubblewrap is tried, so that is the cache key.
    with _lock:
        if not refresh and path in _cache:
            return _cache[path]
        missing: dict[str, str] = {}
        for rung in ("bwrap", "namespaces"):
            try:
                why = _try_bwrap(path) if rung == "bwrap" else _try_namespaces()
            except Exception as exc:  # a probe must never take the harness down
                why = f"probe failed: {exc}"
            if why is not None:
                missing[rung] = why
        available = tuple(r for r in RUNGS if r not in missing)
        report = ProbeReport(available=available, missing=missing, bwrap=path)
        _cache[path] = report
        return report


def probe(*, bwrap: str | None = None, refresh: bool = False) -> list[str]:
    """Names of the containment rungs available here, strongest first (see `probe_report`)."""
    return list(probe_report(bwrap=bwrap, refresh=refresh).available)


def select(name: str = "auto", *, bwrap: str | None = None) -> Sandbox:
    """The sandbox for `name` (`auto`, `bwrap`, `namespaces`, `floor` or `none`).

    `auto` takes the strongest available rung and logs a warning naming each stronger rung it
    skipped and why.

    Raises:
        SandboxError: the named backend is not available here.
        ConfigError: `name` is not a backend name.
    """
    if name != "auto" and name not in RUNGS:
        raise ConfigError(f"unknown sandbox {name!r}: expected auto, {', '.join(RUNGS)}")
    if name in ("floor", "none"):
        return _build(name, None)
    report = probe_report(bwrap=bwrap)
    if name != "auto":
        if name not in report.available:
            raise SandboxError(f"sandbox {name!r} is not available here: {report.missing[name]}")
        return _build(name, report.bwrap)
    chosen = report.available[0]
    skipped = [f"{r}: {report.missing[r]}" for r in RUNGS[: RUNGS.index(chosen)]]
    if skipped:
        _log.warning("sandbox auto chose %s; unavailable: %s", chosen, "; ".join(skipped))
    return _build(chosen, report.bwrap)


def _build(name: str, bwrap: str | None) -> Sandbox:
    if name == "bwrap":
        assert bwrap is not None, "the probe found bubblewrap"
        return BwrapSandbox(bwrap)
    if name == "namespaces":
        return NamespacesSandbox()
    return FloorSandbox() if name == "floor" else NoneSandbox()

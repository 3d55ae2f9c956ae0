"""Sandbox suite fixtures: one parameter per rung `probe()` reports; real processes only."""

from __future__ import annotations

import socket
import sys
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from ioh_tui.sandbox import CAPABILITIES, Capabilities, Sandbox, probe, select

AVAILABLE = probe()
"""Probed once at collection: the parameter list must be known before any test runs."""

CONTAINED = [r for r in AVAILABLE if r != "none"]

PY = sys.executable


@pytest.fixture(params=CONTAINED)
def rung(request: pytest.FixtureRequest) -> str:
    """Every containing rung available here (bwrap, namespaces, floor on the CI machine)."""
    name: str = request.param
    return name


@pytest.fixture(params=AVAILABLE)
def any_rung(request: pytest.FixtureRequest) -> str:
    """Every rung available here, `none` included (caps and teardown apply to all)."""
    name: str = request.param
    return name


@pytest.fixture
def sandbox(rung: str) -> Sandbox:
    return select(rung)


@pytest.fixture
def caps(rung: str) -> Capabilities:
    return CAPABILITIES[rung]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


@pytest.fixture
def listener() -> Iterator[int]:
    """A real TCP listener on the host's 127.0.0.1; yields its port.

    The kernel completes the handshake from the backlog, so a connect succeeds without accept().
    """
    with socket.create_server(("127.0.0.1", 0), backlog=16) as server:
        yield server.getsockname()[1]


def script(source: str) -> list[str]:
    """argv running a Python snippet (dedented) with this interpreter."""
    return [PY, "-c", textwrap.dedent(source)]


def token() -> str:
    """A `sleep` duration unique to one test: children's argv carry it, so the host finds them."""
    return f"{1000 + uuid.uuid4().int % 10**6}.{uuid.uuid4().int % 10**9:09d}"


def live_with(marker: str) -> list[psutil.Process]:
    """Host processes (any namespace) whose command line contains `marker`, zombies excluded."""
    found: list[psutil.Process] = []
    for proc in psutil.process_iter(["cmdline", "status"]):
        cmdline = proc.info["cmdline"] or []
        if proc.info["status"] != psutil.STATUS_ZOMBIE and any(marker in a for a in cmdline):
            found.append(proc)
    return found


def sleepers(marker: str) -> list[psutil.Process]:
    """The live sleepers `TREE` started (`sleep <marker>`)."""
    return [p for p in live_with(marker) if p.info["cmdline"] == ["sleep", marker]]


TREE = """
import os, subprocess, sys, time
marker, pids, mode = sys.argv[1], sys.argv[2], sys.argv[3]
# sh records its pid, then becomes `sleep <marker>`: the marker is in the live process's argv.
sleeper = ["sh", "-c", 'echo $$ >> "$1"; exec sleep "$0"', marker, pids]
quiet = dict(stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
for _ in range(2):
    subprocess.Popen(sleeper)                       # plain children
if os.fork() == 0:                                  # double fork: the middle process exits
    subprocess.Popen(sleeper, **quiet)
    os._exit(0)
subprocess.Popen(sleeper, start_new_session=True, **quiet)   # setsid child
if os.fork() == 0:                                  # classic daemon: fork, setsid, fork, exit
    os.setsid()
    if os.fork() == 0:
        os.execvp("sh", sleeper)
    os._exit(0)
def sleeping():
    try:
        found = open(pids).read().split()
    except FileNotFoundError:
        return 0
    n = 0
    for pid in found:
        try:
            n += open(f"/proc/{pid}/cmdline").read().startswith("sleep")
        except OSError:
            pass
    return n
deadline = time.monotonic() + 20
while sleeping() < 5 and time.monotonic() < deadline:
    time.sleep(0.01)
print("ready", flush=True)
# Wait for the test to have counted the sleepers (it creates `go`): in a PID namespace they die
# the moment this process exits, which would race the count.
go = os.path.join(os.path.dirname(pids), "go")
while not os.path.exists(go) and time.monotonic() < deadline:
    time.sleep(0.01)
if mode == "hang":
    time.sleep(120)
"""
"""A tree of 5 sleepers: 2 children, a double-forked grandchild, a setsid child and a daemon."""

TREE_SIZE = 5

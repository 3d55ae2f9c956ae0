"""Issue 18 item 3: no host unix socket (pathname or abstract) and no AF_VSOCK from inside.

A read-only bind does not stop `connect()`; these listeners sit outside /tmp (which is private
anyway), in the places the adversary used: a runtime directory, /var/tmp and the home directory.
"""

from __future__ import annotations

import contextlib
import errno
import os
import socket
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from ioh_tui.sandbox import Capabilities, Limits, Sandbox

from .conftest import script

CONNECT = """
import socket, sys
for name in sys.argv[1:]:
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.connect("\\0" + name[1:] if name.startswith("@") else name)
        print("reached", name)
    except OSError as exc:
        print("blocked", name, exc.errno)
    finally:
        sock.close()
"""

VSOCK = """
import socket
try:
    socket.socket(40, socket.SOCK_STREAM).close()  # AF_VSOCK
    print("opened")
except OSError as exc:
    print("denied", exc.errno)
"""

OWN_SOCKETS = """
import os, socket, sys, threading
a, b = socket.socketpair()
a.sendall(b"pair"); print(b.recv(4).decode())
for label, where in (("/tmp", "/tmp"), ("workspace", os.getcwd())):
    path = os.path.join(where, "own.sock")
    server = socket.socket(socket.AF_UNIX); server.bind(path); server.listen()
    client = socket.socket(socket.AF_UNIX); client.connect(path)
    conn, _ = server.accept(); client.sendall(b"unix"); print(conn.recv(4).decode(), label)
    os.unlink(path)
import multiprocessing.connection as mc
listener = mc.Listener(family="AF_UNIX")
threading.Thread(target=lambda: listener.accept().send("mp"), daemon=True).start()
print(mc.Client(listener.address, family="AF_UNIX").recv())
"""


def _listen(path: str) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX)
    sock.bind("\0" + path[1:] if path.startswith("@") else path)
    sock.listen(8)
    return sock


@pytest.fixture
def host_sockets() -> Iterator[list[str]]:
    """Listening unix sockets on the host: under /run (or /var/tmp), home, and one abstract."""
    tag = uuid.uuid4().hex[:10]
    dirs: list[str] = []
    for parent in ("/run", "/var/tmp", str(Path.home())):
        with contextlib.suppress(OSError):
            dirs.append(tempfile.mkdtemp(prefix=f"ioh-sock-{tag}-", dir=parent))
    names = [os.path.join(d, "host.sock") for d in dirs] + [f"@ioh-sock-{tag}"]
    socks = [_listen(name) for name in names]
    try:
        yield names
    finally:
        for sock in socks:
            sock.close()
        for d in dirs:
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(d, "host.sock"))
            os.rmdir(d)


async def test_host_unix_sockets_are_unreachable(
    sandbox: Sandbox, caps: Capabilities, workspace: Path, host_sockets: list[str]
) -> None:
    if not caps.denies_network:
        pytest.skip("the floor does not deny the network (documented)")
    # Control: the host itself reaches every listener.
    for name in host_sockets:
        with socket.socket(socket.AF_UNIX) as probe:
            probe.connect("\0" + name[1:] if name.startswith("@") else name)
    result = await sandbox.run(
        [*script(CONNECT), *host_sockets], workspace, limits=Limits(wall_s=20)
    )
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == len(host_sockets) >= 3, result.stdout
    assert all(line.startswith("blocked") for line in lines), result.stdout


async def test_host_unix_socket_in_the_workspace_is_masked(
    sandbox: Sandbox, caps: Capabilities, workspace: Path
) -> None:
    if not caps.denies_network:
        pytest.skip("the floor does not deny the network (documented)")
    path = str(workspace / "host.sock")
    with _listen(path):
        result = await sandbox.run([*script(CONNECT), path], workspace, limits=Limits(wall_s=20))
    assert result.stdout.startswith("blocked"), result.stdout + result.stderr


async def test_vsock_is_denied(sandbox: Sandbox, caps: Capabilities, workspace: Path) -> None:
    if not caps.seccomp:
        pytest.skip("no seccomp filter on this rung (documented)")
    result = await sandbox.run(script(VSOCK), workspace, limits=Limits(wall_s=20))
    assert result.stdout.strip() == f"denied {errno.EPERM}", result.stdout + result.stderr


async def test_own_unix_sockets_still_work(sandbox: Sandbox, workspace: Path) -> None:
    result = await sandbox.run(script(OWN_SOCKETS), workspace, limits=Limits(wall_s=30))
    assert result.exit_code == 0, result.stderr
    assert result.stdout.split("\n")[:4] == [
        "pair",
        "unix /tmp",
        "unix workspace",
        "mp",
    ], result.stdout

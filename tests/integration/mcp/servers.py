"""The fixture MCP servers as the tests start them, and how a test finds their processes."""

from __future__ import annotations

import atexit
import contextlib
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import psutil

from ioh_tui.mcp import ServerSpec

_SOURCE = Path(__file__).resolve().parents[2] / "fixtures" / "mcp_servers" / "tools_server.py"


def _visible_copy() -> Path:
    """The fixture server where every sandbox rung shows it.

    The sandbox gives commands a private /tmp, and a checkout (with this file) may be under /tmp,
    as CI clones can be: the server would not start there. /var/tmp is shown read-only.
    """
    if not str(_SOURCE).startswith("/tmp/") or not Path("/var/tmp").is_dir():
        return _SOURCE
    folder = Path(tempfile.mkdtemp(prefix="ioh-mcp-fixture-", dir="/var/tmp"))
    # mkdtemp makes it 0700: a root harness runs the server as an unprivileged user, who must
    # be able to read it, as a checkout's own files are.
    folder.chmod(0o755)
    shutil.copy(_SOURCE, folder / _SOURCE.name)
    (folder / _SOURCE.name).chmod(0o644)
    atexit.register(shutil.rmtree, folder, True)
    return folder / _SOURCE.name


SERVER = _visible_copy()


def marker() -> str:
    """A word put on a server's command line, so its processes can be found by it."""
    return f"ioh-mcp-test-{uuid.uuid4().hex[:12]}"


def stdio_spec(
    name: str = "fx", tag: str = "", *, resources: bool = False, **kw: object
) -> ServerSpec:
    """The fixture server on stdio, with `tag` on its command line (and its resources)."""
    args = (str(SERVER), tag, *(["--resources"] if resources else []))
    return ServerSpec(name, command=sys.executable, args=args, **kw)  # type: ignore[arg-type]


def config_toml(name: str, tag: str, *, resources: bool = False) -> str:
    """A configuration file declaring the fixture server on stdio (with its resources)."""
    more = ', "--resources"' if resources else ""
    return (
        f"[mcp.servers.{name}]\n"
        f'command = "{sys.executable}"\n'
        f'args = ["{SERVER}", "{tag}"{more}]\n'
        'env = { FIXTURE_VAR = "from-config" }\n'
    )


def processes_with(tag: str) -> list[psutil.Process]:
    """Live processes whose command line holds `tag`."""
    found = []
    for proc in psutil.process_iter(["cmdline", "status"]):
        cmdline = proc.info["cmdline"] or []
        if proc.info["status"] != psutil.STATUS_ZOMBIE and any(tag in part for part in cmdline):
            found.append(proc)
    return found


def gone(tag: str, within_s: float = 5.0) -> bool:
    """Whether every process holding `tag` is gone (waiting up to `within_s`)."""
    deadline = time.monotonic() + within_s
    while processes_with(tag):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def http_server(transport: str = "http") -> Iterator[str]:
    """The fixture server at 127.0.0.1 (a subprocess) on streamable HTTP or `sse`; its URL."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, str(SERVER), f"--{transport}", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 20
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
                break
            if time.monotonic() > deadline or proc.poll() is not None:
                raise RuntimeError("the fixture HTTP server did not start")
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/{'sse' if transport == 'sse' else 'mcp'}"
    finally:
        proc.kill()
        proc.wait(10)

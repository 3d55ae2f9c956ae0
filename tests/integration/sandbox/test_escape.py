"""The escape suite: each containing rung `probe()` reports, against real processes in tmp_path."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ioh_tui.sandbox import Capabilities, Limits, Sandbox, select
from ioh_tui.sandbox.user import ROOT_USER_ENV

from .conftest import script

CONNECT = """
import socket, sys
try:
    socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=2).close()
    print("connected")
except OSError as exc:
    print(f"blocked {exc.errno}")
"""


async def test_host_loopback_is_unreachable(
    sandbox: Sandbox, caps: Capabilities, workspace: Path, listener: int
) -> None:
    result = await sandbox.run(
        [*script(CONNECT), str(listener)], workspace, limits=Limits(wall_s=10)
    )
    assert result.exit_code == 0, result.stderr
    if caps.denies_network:
        assert result.stdout.startswith("blocked"), result.stdout
    else:
        # Documented limitation (portable floor): no network isolation without namespaces.
        assert result.stdout.strip() == "connected"


async def test_network_true_reaches_host_loopback(
    sandbox: Sandbox, workspace: Path, listener: int
) -> None:
    result = await sandbox.run(
        [*script(CONNECT), str(listener)], workspace, limits=Limits(wall_s=10), network=True
    )
    assert result.stdout.strip() == "connected", result.stderr


WRITE = """
import sys
for path in sys.argv[1:]:
    try:
        with open(path, "w") as f:
            f.write("x")
        print("wrote", path)
    except OSError as exc:
        print("denied", path, exc.errno)
"""


@pytest.fixture
def as_harness_user(rung: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The floor's documented reach is its user's: as root that user is nobody unless told.

    These tests show what a floor command can do as the harness's own user; what it cannot do as
    the unprivileged user a root harness gives it is in test_root_user.py.
    """
    if rung == "floor":
        monkeypatch.setenv(ROOT_USER_ENV, "root")


@pytest.mark.usefixtures("as_harness_user")
async def test_writes_outside_workspace_fail(
    sandbox: Sandbox, caps: Capabilities, workspace: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    cache = tmp_path / "cache"
    cache.mkdir()
    targets = [workspace / "inside.txt", outside / "escape.txt", cache / "allowed.txt"]
    result = await sandbox.run(
        [*script(WRITE), *map(str, targets)], workspace, writable=[cache], limits=Limits(wall_s=10)
    )
    assert result.exit_code == 0, result.stderr
    assert (workspace / "inside.txt").read_text() == "x"
    assert (cache / "allowed.txt").read_text() == "x"
    # Documented for the floor: it cannot confine writes.
    assert (outside / "escape.txt").exists() is not caps.confines_writes


async def test_paths_may_be_given_as_strings(
    any_rung: str, workspace: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    argv = [*script(WRITE), str(workspace / "a.txt"), str(cache / "b.txt")]
    result = await select(any_rung).run(
        argv, str(workspace), writable=[str(cache)], limits=Limits(wall_s=10)
    )
    assert result.exit_code == 0, result.stderr
    assert (workspace / "a.txt").read_text() == (cache / "b.txt").read_text() == "x"


@pytest.mark.usefixtures("as_harness_user")
async def test_private_tmp_is_private(
    sandbox: Sandbox, caps: Capabilities, workspace: Path, tmp_path: Path
) -> None:
    # tmp_path itself lives under /tmp: contained rungs see only the workspace inside /tmp.
    sibling = tmp_path / "sibling.txt"
    sibling.write_text("host")
    result = await sandbox.run(
        [*script("import sys; print(open(sys.argv[1]).read())"), str(sibling)],
        workspace,
        limits=Limits(wall_s=10),
    )
    assert (result.exit_code == 0) is not caps.confines_writes


async def test_parent_secrets_are_not_inherited(
    sandbox: Sandbox, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("IOH_SECRET_TEST", "hunter2")
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")
    result = await sandbox.run(
        ["env"], workspace, env={"CALLER_VAR": "given", "http_proxy": "http://127.0.0.1:9"}
    )
    assert result.exit_code == 0
    assert "hunter2" not in result.stdout
    assert "IOH_SECRET_TEST" not in result.stdout
    assert "proxy" not in result.stdout.lower()
    assert "CALLER_VAR=given" in result.stdout
    assert "PATH=" in result.stdout


async def test_seccomp_denies_ptrace(sandbox: Sandbox, caps: Capabilities, workspace: Path) -> None:
    # PTRACE_TRACEME succeeds for any ordinary process; only the filter turns it into EPERM.
    traceme = """
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    print(libc.ptrace(0, 0, None, None), ctypes.get_errno())
    """
    result = await sandbox.run(script(traceme), workspace, limits=Limits(wall_s=10))
    assert result.exit_code == 0, result.stderr
    assert result.stdout.split() == (["-1", "1"] if caps.seccomp else ["0", "0"])


async def test_no_capabilities_inside(
    sandbox: Sandbox, caps: Capabilities, workspace: Path
) -> None:
    if not caps.confines_writes:
        pytest.skip("the floor runs with the caller's privileges (documented)")
    result = await sandbox.run(["grep", "^CapEff", "/proc/self/status"], workspace)
    assert result.stdout.split() == ["CapEff:", "0000000000000000"]


@pytest.mark.usefixtures("as_harness_user")
async def test_host_processes_are_invisible(
    sandbox: Sandbox, caps: Capabilities, workspace: Path
) -> None:
    result = await sandbox.run(
        [*script("import os, sys; os.kill(int(sys.argv[1]), 0)"), str(os.getpid())], workspace
    )
    # In a PID namespace the harness's pid is not ours to signal (it may not even exist there).
    assert (result.exit_code == 0) is not caps.pid_namespace


async def test_credential_stores_are_masked(
    sandbox: Sandbox,
    caps: Capabilities,
    workspace: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Inside the workspace, so the fake home is visible in the sandbox (its /tmp is private).
    home = workspace / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_test").write_text("PRIVATE-KEY")
    (home / ".netrc").write_text("machine x password NETRC-PASSWORD")
    (home / "notes.txt").write_text("ordinary")
    monkeypatch.setenv("HOME", str(home))
    result = await sandbox.run(
        ["sh", "-c", 'cat "$HOME/.ssh/id_test" "$HOME/.netrc" "$HOME/notes.txt"'], workspace
    )
    assert "ordinary" in result.stdout  # HOME itself stays readable (toolchains live there)
    leaked = "PRIVATE-KEY" in result.stdout or "NETRC-PASSWORD" in result.stdout
    assert leaked is not caps.confines_writes  # the floor cannot hide files (documented)

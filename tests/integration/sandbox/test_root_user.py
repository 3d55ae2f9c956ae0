"""A root harness runs each command as an unprivileged user (issue 18, item 16).

Before, every rung ran commands as kernel uid 0: under bwrap and namespaces without capabilities,
but still the owner of every root-only file, so `/etc/shadow` and a 0600 key were readable; on
the floor root-owned files were writable too. Each rung this machine has is tried for real.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from ioh_tui.core.errors import SandboxError
from ioh_tui.sandbox import Limits, select
from ioh_tui.sandbox.floor import key_exposure
from ioh_tui.sandbox.probe import BACKENDS
from ioh_tui.sandbox.user import ROOT_USER_ENV

from .conftest import CONTAINED, script

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="only a root harness drops its uid")

ATTEMPTS = """
import json, os, sys
secret, root_file, root_dir, harness = sys.argv[1:5]
seen = {"uid": os.getuid()}
def attempt(name, act):
    try:
        act()
        seen[name] = "done"
    except OSError as exc:
        seen[name] = exc.strerror
attempt("shadow", lambda: open("/etc/shadow").read())
attempt("secret", lambda: open(secret).read())
attempt("harness", lambda: open(f"/proc/{harness}/environ").read())
attempt("append", lambda: open(root_file, "a").write("x"))
attempt("create", lambda: open(os.path.join(root_dir, "planted"), "w").close())
seen["kept"] = open("kept.txt").read()
with open("kept.txt", "a") as f:
    f.write(" and more")
os.makedirs("made/deeper")
with open("made/deeper/new.txt", "w") as f:
    f.write("created")
print(json.dumps(seen))
"""


@pytest.fixture
def host() -> Iterator[Path]:
    """Root's files outside /tmp (which bwrap and namespaces replace), in a searchable directory."""
    base = Path(tempfile.mkdtemp(prefix="ioh-root-", dir="/var/tmp"))
    base.chmod(0o755)
    (base / "secret").write_text("root only")
    (base / "secret").chmod(0o600)
    (base / "dir").mkdir()
    (base / "dir" / "root.txt").write_text("root's")
    try:
        yield base
    finally:
        shutil.rmtree(base)


@pytest.fixture
def root_workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "kept.txt").write_text("existing")
    return ws


def attempts(host: Path) -> list[str]:
    return [
        *script(ATTEMPTS),
        str(host / "secret"),
        str(host / "dir" / "root.txt"),
        str(host / "dir"),
        str(os.getpid()),
    ]


@pytest.mark.parametrize("rung", [r for r in CONTAINED])
async def test_commands_cannot_read_or_write_roots_files_but_keep_the_workspace(
    rung: str, host: Path, root_workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(ROOT_USER_ENV, raising=False)
    result = await select(rung).run(attempts(host), root_workspace, limits=Limits(wall_s=30))
    assert result.exit_code == 0, result.stderr
    seen = json.loads(result.stdout)
    assert seen["shadow"] == seen["secret"] == "Permission denied"
    # The floor shares the harness's PID namespace: its environment (API keys) stays closed.
    assert seen["harness"] in ("Permission denied", "No such file or directory")
    assert seen["append"] in ("Permission denied", "Read-only file system")
    assert seen["create"] in ("Permission denied", "Read-only file system")
    assert (host / "dir" / "root.txt").read_text() == "root's"
    assert not (host / "dir" / "planted").exists()
    # The workspace stays the command's: it read, changed and created files there.
    assert seen["kept"] == "existing"
    assert (root_workspace / "kept.txt").read_text() == "existing and more"
    made = root_workspace / "made" / "deeper" / "new.txt"
    assert made.read_text() == "created"
    # What it created belongs to the workspace's owner (root here), not to nobody.
    for path in (made, made.parent, root_workspace / "made"):
        assert (path.stat().st_uid, path.stat().st_gid) == (0, 0)
    assert key_exposure(BACKENDS[rung]) is None


async def test_a_users_workspace_runs_commands_as_that_user(
    host: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(ROOT_USER_ENV, raising=False)
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "kept.txt").write_text("existing")
    for path in (ws, ws / "kept.txt"):
        os.chown(path, 4321, 4321)  # a uid with no account: owner, not a name, decides
    result = await select(CONTAINED[0]).run(attempts(host), ws, limits=Limits(wall_s=30))
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["secret"] == "Permission denied"
    made = ws / "made" / "deeper" / "new.txt"
    assert (made.stat().st_uid, made.stat().st_gid) == (4321, 4321)


async def test_root_user_root_keeps_the_old_behaviour_and_says_so(
    host: Path, root_workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ROOT_USER_ENV, "root")
    rung = CONTAINED[0]
    result = await select(rung).run(attempts(host), root_workspace, limits=Limits(wall_s=30))
    seen = json.loads(result.stdout)
    assert seen["secret"] == "done" and seen["uid"] == 0
    assert "uid 0" in (key_exposure(BACKENDS[rung]) or "")


async def test_an_unknown_root_user_is_one_clear_error(
    root_workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ROOT_USER_ENV, "no-such-user-here")
    with pytest.raises(SandboxError, match="no such user"):
        await select(CONTAINED[0]).run(["true"], root_workspace)


@pytest.mark.parametrize("rung", [r for r in CONTAINED])
async def test_a_drop_that_cannot_be_set_up_runs_nothing_and_says_why(
    rung: str, root_workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # sysfs has no idmapped mounts: a writable root there cannot be handed to the command's user.
    monkeypatch.delenv(ROOT_USER_ENV, raising=False)
    with pytest.raises(SandboxError, match=r"cannot run commands as uid .* idmapped mount") as err:
        await select(rung).run(["touch", "ran"], root_workspace, writable=["/sys/kernel"])
    assert f"{ROOT_USER_ENV}=root" in str(err.value)
    assert not (root_workspace / "ran").exists()

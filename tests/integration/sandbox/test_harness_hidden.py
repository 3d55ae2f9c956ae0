"""The store and the data directory are invisible to commands (issue 18, item 2).

Before, `--ro-bind / /` showed every run's transcript to every command, and on a writable path the
store itself. The stores live outside /tmp here, because the private /tmp would hide them anyway.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from ioh_tui.core.errors import ConfigError
from ioh_tui.engine import TaskContract, run
from ioh_tui.paths import default_store, store_files
from ioh_tui.sandbox import select
from ioh_tui.sandbox.user import ROOT_USER_ENV
from ioh_tui.store import Store
from ioh_tui.verification import NoGate
from tests.integration.engine.helpers import scripted
from tests.integration.sandbox.conftest import AVAILABLE

MOUNTING = [r for r in AVAILABLE if r in ("bwrap", "namespaces")]

PROBE = """
import json, os, sys
seen = {}
for path in sys.argv[1:]:
    try:
        if os.path.isdir(path):
            seen[path] = sorted(os.listdir(path))
            open(os.path.join(path, "planted"), "w").close()
        else:
            with open(path, "rb") as f:
                seen[path] = f.read(64).hex()
            with open(path, "ab") as f:
                f.write(b"forged")
    except OSError as exc:
        seen[path + " error"] = exc.strerror
print(json.dumps(seen))
"""


@pytest.fixture
def outside_tmp() -> Iterator[Path]:
    """A scratch directory outside /tmp (which the sandbox replaces whole)."""
    base = Path("/var/tmp")
    if not base.is_dir() or base.resolve().is_relative_to("/tmp"):
        pytest.skip("no /var/tmp outside /tmp here")
    path = Path(tempfile.mkdtemp(prefix="ioh-hidden-", dir=base))
    # Searchable by everyone, so a root harness's unprivileged commands meet the masks rather
    # than a directory they cannot enter (test_root_user.py).
    path.chmod(0o755)
    try:
        yield path
    finally:
        shutil.rmtree(path)


def digest(paths: list[Path]) -> dict[str, str]:
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in paths if p.exists()}


@pytest.mark.parametrize("rung", MOUNTING)
async def test_commands_cannot_read_or_write_the_store_or_the_data_directory(
    rung: str, outside_tmp: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = outside_tmp / "home"
    home.mkdir()
    monkeypatch.setenv("IOH_TUI_HOME", str(home))
    custom = outside_tmp / "elsewhere" / "custom.db"
    workspace = tmp_path / "ws"
    workspace.mkdir()
    async with Store.open(default_store()) as default, Store.open(custom) as store:
        for opened in (default, store):
            await opened.start_run(
                goal="SECRET-GOAL",
                mode="workspace",
                root="/x",
                subject=None,
                contract={},
                provider="p",
                model=None,
                sandbox=rung,
            )
        files = [p for p in store_files(custom) if p.exists()]
        assert {p.name for p in files} >= {"custom.db", "custom.db-wal", "custom.db.key"}
        before = digest(files)
        result = await select(rung).run(
            [sys.executable, "-c", PROBE, str(home), *map(str, files)], workspace
        )
        after = digest(files)
    seen = json.loads(result.stdout)
    assert seen[str(home)] == []  # the default store is not even listed
    assert seen[f"{home} error"] == "Read-only file system"
    for path in files:
        # Covered by /dev/null: empty, or (bwrap's nodev mount) not even opened.
        assert seen.get(str(path), "") == ""
    assert after == before  # nothing reached the real files
    assert list(home.iterdir()) and not (home / "planted").exists()


async def test_the_floor_cannot_hide_the_store(
    outside_tmp: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Documented in docs/security.md: on the floor (and `none`) commands see what the user sees
    # (as root, with `root_user = root`: otherwise they run as nobody, who cannot read it).
    monkeypatch.setenv(ROOT_USER_ENV, "root")
    custom = outside_tmp / "custom.db"
    async with Store.open(custom):
        result = await select("floor").run(
            [
                sys.executable,
                "-c",
                "import sys; print(open(sys.argv[1], 'rb').read(15))",
                str(custom),
            ],
            tmp_path,
        )
    assert "SQLite format 3" in result.stdout


async def test_a_run_whose_store_is_inside_its_workspace_is_refused(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    async with Store.open(workspace / ".ioh" / "store.db") as store:
        with pytest.raises(ConfigError, match="inside the workspace"):
            await run(
                TaskContract.workspace("x", workspace, NoGate()),
                scripted({"text": "hi"}),
                store=store,
                sandbox=select("floor"),
            )
        assert await store.runs() == []


def ioh_exec(tmp_path: Path, store: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    """`ioh-tui exec` of a one-turn scenario over `tmp_path/ws`."""
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    scenario = tmp_path / "s.json"
    scenario.write_text(json.dumps({"model": "m", "turns": [{"text": "hi"}]}))
    argv = ["exec", "x", "--workspace", str(workspace), "--scenario", str(scenario), *extra]
    return subprocess.run(
        [sys.executable, "-m", "ioh_tui", *argv, "--store", str(store)],
        capture_output=True,
        text=True,
        check=False,
    )


def test_exec_refuses_a_store_inside_the_workspace_before_making_it(tmp_path: Path) -> None:
    done = ioh_exec(tmp_path, tmp_path / "ws" / "s.db")
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "inside the workspace" in done.stderr
    assert list((tmp_path / "ws").iterdir()) == []


@pytest.mark.parametrize(("rung", "warned"), [("floor", True), *((r, False) for r in MOUNTING[:1])])
def test_exec_says_when_its_rung_cannot_hide_the_store(
    tmp_path: Path, rung: str, warned: bool
) -> None:
    done = ioh_exec(tmp_path, tmp_path / "s.db", "--sandbox", rung)
    assert done.returncode == 0, done.stderr
    assert ("commands can read and write the store" in done.stderr) is warned

"""A gate work directory left by a SIGKILLed drive is removed when the run is resumed."""

from __future__ import annotations

import json
import os
import shlex
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from ioh_tui.engine.gatework import remove_left
from ioh_tui.store import Store

pytestmark = pytest.mark.slow

# The gate sleeps while `slow` exists, so the first drive is killed inside it; resumed, it passes.
GATE = "import os, time; time.sleep(10 if os.path.exists('slow') else 0)"
SCENARIO = {
    "model": "gate-model",
    "turns": [
        {
            "text": "Reading.",
            "tool_calls": [{"name": "read_file", "arguments": {"path": "calc.py"}}],
        },
        {"text": "Done."},
    ],
}


def _argv(*words: str, where: Path) -> list[str]:
    flags = {"--scenario": where / "s.json", "--store": where / "store.db", "--sandbox": "floor"}
    pairs = [str(x) for pair in flags.items() for x in pair]
    return [sys.executable, "-m", "ioh_tui", *words, "--json", *pairs]


def _created(store: Path) -> list[str]:
    with sqlite3.connect(store) as db:
        rows = db.execute("SELECT detail FROM sandbox_events WHERE kind = 'workdir_created'")
        return [r[0] for r in rows]


def test_a_killed_drives_gate_directory_is_removed_on_resume(project: Path, tmp_path: Path) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = {**os.environ, "TMPDIR": str(scratch)}
    (tmp_path / "s.json").write_text(json.dumps(SCENARIO))
    (project / "slow").write_text("")
    gate = shlex.join([sys.executable, "-c", GATE])
    start = _argv("exec", "read", "--workspace", str(project), "--verify-cmd", gate, where=tmp_path)
    (tmp_path / "p.toml").write_text('[policy.defaults]\nread = "allow"\n')
    proc = subprocess.Popen(
        [*start, "--policy", str(tmp_path / "p.toml")],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    assert proc.stdout is not None
    began = time.monotonic()
    for line in proc.stdout:
        if json.loads(line)["event"] == "verification_started":
            break
    deadline = time.monotonic() + 10
    while not _created(tmp_path / "store.db") and time.monotonic() < deadline:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(10)
    assert time.monotonic() - began < 15  # killed inside the sleeping gate, not after it
    (left,) = _created(tmp_path / "store.db")
    assert Path(left).is_dir() and Path(left).parent == scratch.resolve()

    (project / "slow").unlink()
    resumed = subprocess.run(
        _argv("resume", "1", "--headless", where=tmp_path),
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert resumed.returncode == 0, resumed.stdout[-2000:]
    assert not Path(left).exists()
    assert list(scratch.glob("ioh-gate-*")) == []
    with sqlite3.connect(tmp_path / "store.db") as db:
        removed = db.execute(
            "SELECT detail FROM sandbox_events WHERE kind = 'workdir_removed'"
        ).fetchall()
    assert (left,) in removed


async def test_a_forged_trace_row_never_removes_another_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    keep = tmp_path / "project"
    deeper = tmp_path / "sub" / "ioh-gate-deeper"
    real = tmp_path / "ioh-gate-real"
    for path in (keep, deeper, real / "build"):
        path.mkdir(parents=True)
    link = tmp_path / "ioh-gate-link"
    link.symlink_to(keep)
    async with Store.memory() as store:
        run_id = await store.start_run(
            goal="g",
            mode="workspace",
            root=str(keep),
            subject=None,
            contract={},
            provider="scripted",
            model=None,
            sandbox="floor",
        )
        for path in (keep, deeper, link, real):
            await store.add_sandbox_event(run_id, 0, "workdir_created", "floor", str(path))
        await remove_left(store, run_id, "floor")
        removed = [
            e.detail for e in await store.sandbox_events(run_id) if e.kind == "workdir_removed"
        ]
    # Only a directory the gate could have made goes: an `ioh-gate-` one right in the temp dir.
    assert keep.is_dir() and deeper.is_dir() and link.is_symlink()
    assert not real.exists() and removed == [str(real)]

"""The real `ioh-tui demo` in a pseudo-terminal, ended by SIGTERM or SIGHUP as a user's session
would end it: the run is recorded `cancelled` and its temporary directories are gone."""

from __future__ import annotations

import os
import pty
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow


def _drain(fd: int) -> None:
    """Read the app's output so it never blocks on a full terminal."""
    while True:
        try:
            if not os.read(fd, 65536):
                return
        except OSError:
            return


def _status(store: Path) -> str | None:
    """The first run's status, and its outcome once it has one (`completed/cancelled`)."""
    if not store.exists():
        return None
    try:
        with sqlite3.connect(store) as db:
            row = db.execute("SELECT status, outcome FROM runs ORDER BY id LIMIT 1").fetchone()
    except sqlite3.OperationalError:
        return None
    return None if row is None else "/".join(str(v) for v in row if v is not None)


def _pending(store: Path) -> bool:
    with sqlite3.connect(store) as db:
        return bool(db.execute("SELECT 1 FROM approvals WHERE status = 'pending'").fetchone())


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_a_signal_to_the_app_records_the_run_and_removes_its_temporary_files(
    sig: signal.Signals, tmp_path: Path
) -> None:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    store = tmp_path / "s.db"
    env = {
        **os.environ,
        "TERM": "xterm-256color",
        "TMPDIR": str(tmp),
        "IOH_TUI_HOME": str(tmp_path / "home"),
    }
    leader, follower = pty.openpty()
    app = subprocess.Popen(
        [sys.executable, "-m", "ioh_tui", "demo", "--store", str(store)],
        stdin=follower,
        stdout=follower,
        stderr=follower,
        env=env,
        start_new_session=True,
    )
    os.close(follower)
    threading.Thread(target=_drain, args=(leader,), daemon=True).start()
    try:
        deadline = time.monotonic() + 60
        # The demo's first write asks the operator: the run is live and waiting on the modal.
        while not (_status(store) == "running" and _pending(store)):
            assert time.monotonic() < deadline, "the demo never asked"
            assert app.poll() is None, "the app ended on its own"
            time.sleep(0.2)
        assert any(p.name.startswith("ioh-tui-demo-") for p in tmp.iterdir())
        app.send_signal(sig)
        app.wait(30)
    finally:
        if app.poll() is None:
            app.kill()
            app.wait()
        os.close(leader)
    assert _status(store) == "completed/cancelled"
    assert [p.name for p in tmp.iterdir()] == []

"""A store written by the first schema version opens, migrates in place and resumes."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from ioh_tui.core.errors import ResumeError
from ioh_tui.engine import resume
from ioh_tui.policy import Decision
from ioh_tui.sandbox import select
from ioh_tui.store import Store
from ioh_tui.store.schema import SCHEMA_VERSION
from tests.integration.engine.helpers import scripted

FIXTURE = Path(__file__).parents[2] / "fixtures" / "store-v1.db"


def _relocated(tmp_path: Path) -> tuple[Path, Path]:
    """A copy of the fixture pointing at a fresh workspace (the fixture says /fixture/ws)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (ws / "check_calc.py").write_text("import calc\n\nassert calc.add(2, 3) == 5\n")
    db = tmp_path / "store.db"
    shutil.copy(FIXTURE, db)
    with sqlite3.connect(db) as raw:
        raw.execute("UPDATE runs SET contract = replace(contract, '/fixture/ws', ?)", (str(ws),))
    return ws, db


async def test_a_version_1_store_migrates_and_its_paused_run_resumes(tmp_path: Path) -> None:
    ws, db = _relocated(tmp_path)
    with sqlite3.connect(db) as raw:
        assert raw.execute("PRAGMA user_version").fetchone() == (1,)
        before = {
            t: raw.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
            for t in ("runs", "steps", "approvals")
        }
    provider = scripted(
        {
            "text": "Reading.",
            "tool_calls": [
                {
                    "name": "edit_file",
                    "arguments": {"path": "calc.py", "old_text": "a - b", "new_text": "a + b"},
                }
            ],
        },
        {"text": "Done."},
    )
    async with Store.open(db) as store:
        (pending,) = await store.approvals(pending_only=True)
        assert (pending.target, pending.goal) == ("calc.py", "fix add")
        result = await resume(
            1, provider, store=store, decision=Decision.approve(), sandbox=select("floor")
        )
    assert (result.outcome, result.steps) == ("success", 1)
    assert "a + b" in (ws / "calc.py").read_text()
    with sqlite3.connect(db) as raw:
        assert raw.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
        after = {
            t: raw.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
            for t in ("runs", "steps", "approvals")
        }
    assert after == before  # nothing lost, nothing duplicated


async def test_a_store_from_a_newer_version_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "new.db"
    with sqlite3.connect(db) as raw:
        raw.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(ResumeError, match="newer than this ioh-tui understands"):
        async with Store.open(db):
            pass

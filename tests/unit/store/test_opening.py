"""Opening a store: what is refused before SQLite writes, and what is not (issue 18, item 14)."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import threading
import time
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from ioh_tui.core.errors import ResumeError
from ioh_tui.store import Store, StoreError
from ioh_tui.store.opening import check_store, expected_tables
from ioh_tui.store.schema import MIGRATIONS, SCHEMA_VERSION


async def _fill(store: Store, events: int) -> int:
    run_id = await store.start_run(
        goal="g",
        mode="workspace",
        root="/w",
        subject=None,
        contract={"goal": "g"},
        provider="scripted",
        model=None,
        sandbox="floor",
    )
    await store.add_events([(run_id, None, "note_added", {"text": "x" * 500})] * events)
    return run_id


def _wal_outgrew_the_file(path: Path) -> bool:
    return Path(f"{path}-wal").stat().st_size > path.stat().st_size


async def test_a_live_store_whose_pages_are_still_in_the_wal_is_not_called_truncated(
    tmp_path: Path,
) -> None:
    path = tmp_path / "live.db"
    async with Store.open(path) as writer:
        await _fill(writer, 400)
        assert _wal_outgrew_the_file(path)  # the pages are not checkpointed yet
        check_store(path, create=False)
        async with Store.open(path, create=False) as reader:
            assert len(await reader.runs()) == 1


async def test_damage_deeper_in_a_table_is_a_store_error_when_it_is_read(tmp_path: Path) -> None:
    path = tmp_path / "deep.db"
    async with Store.open(path) as store:
        run_id = await _fill(store, 400)
    size = path.stat().st_size
    with path.open("r+b") as file:  # the last pages hold the newest events, far from any root
        file.seek(size - 3 * 4096)
        file.write(b"\xff" * 4096)
    opened: list[Store] = []

    async def read() -> None:
        async with Store.open(path, create=False) as store:
            opened.append(store)  # the first page of each table reads fine
            await store.events(run_id)

    with pytest.raises(StoreError, match=f"store {path} is damaged: database disk image"):
        await read()
    assert opened


async def test_a_store_error_is_a_resume_error_and_the_file_keeps_every_byte(
    tmp_path: Path,
) -> None:
    path = tmp_path / "old.db"
    async with Store.open(path) as store:
        await _fill(store, 1)
    with closing(sqlite3.connect(path)) as db, db:
        db.execute("DROP TABLE summaries")
    before = path.read_bytes()
    with pytest.raises(ResumeError, match="its summaries table is missing"):
        async with Store.open(path):
            pass
    assert path.read_bytes() == before


def test_the_expected_tables_are_what_each_version_created() -> None:
    assert "runs" in expected_tables(1) and "spawns" not in expected_tables(1)
    assert expected_tables(SCHEMA_VERSION) >= {"runs", "steps", "spawns", "summaries"}
    assert expected_tables(0) == set()


@pytest.mark.parametrize("create", [True, False])
def test_a_fifo_is_refused_without_being_opened(tmp_path: Path, create: bool) -> None:
    fifo = tmp_path / "store.db"
    os.mkfifo(fifo)  # reading it would block for ever
    with pytest.raises(StoreError, match="is not a regular file"):
        check_store(fifo, create=create)


async def test_a_store_another_process_migrates_while_this_one_waits_opens(
    tmp_path: Path,
) -> None:
    """Two processes opening one new store at once: the second must not migrate it again.

    The other process is a raw connection holding the write lock; it migrates the store and
    commits while `Store.open` waits for the lock (it read the version before it waited).
    """
    path = tmp_path / "store.db"
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("PRAGMA journal_mode = WAL")  # as an ioh-tui process sets it first
    other.execute("BEGIN IMMEDIATE")
    opening = asyncio.create_task(_open_and_count(path))
    await asyncio.sleep(0.5)  # `Store.open` reads version 0 and then waits for the lock
    for script in MIGRATIONS:
        for statement in script.split(";"):
            if statement.strip():
                other.execute(statement)
    other.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    other.execute("COMMIT")
    other.close()
    assert await opening == 0


async def _open_and_count(path: Path) -> int:
    async with Store.open(path) as store:
        return len(await store.runs())


def _worker_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if "_connection_worker_thread" in t.name]


def test_a_cancel_during_the_connect_leaves_no_thread_posting_to_a_closed_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A screen's store reader cancelled while aiosqlite connects, as the app exits.

    The connect is slowed so the cancel lands inside it and the loop closes right after the
    task ends. Before, the task ended at once and aiosqlite's thread, connecting still, then
    posted its result to the closed loop and died with `RuntimeError: Event loop is closed`.
    """
    path = tmp_path / "runs.db"
    connect = sqlite3.connect

    def slow(*args: Any, **kwargs: Any) -> Any:
        time.sleep(0.3)
        return connect(*args, **kwargs)

    # aiosqlite's connector calls `sqlite3.connect` on its thread: the same module object.
    monkeypatch.setattr(sqlite3, "connect", slow)
    failed: list[threading.ExceptHookArgs] = []
    monkeypatch.setattr(threading, "excepthook", failed.append)
    before = set(_worker_threads())

    async def main() -> None:
        async def hold() -> None:
            async with Store.open(path):
                await asyncio.sleep(10)

        task = asyncio.create_task(hold())
        await asyncio.sleep(0.1)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    for thread in set(_worker_threads()) - before:
        thread.join(5)
        assert not thread.is_alive()
    assert [str(f.exc_value) for f in failed] == []

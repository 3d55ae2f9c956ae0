"""The per-run work directory is gone on every exit path, whatever was left inside it."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from ioh_tui.sandbox import workdir


def _litter(path: Path) -> None:
    locked = path / "locked"
    (locked / "deep").mkdir(parents=True)
    (locked / "deep" / "f").write_text("x")
    (locked / "ro.txt").write_text("x")
    (locked / "ro.txt").chmod(0o444)
    (locked / "deep").chmod(0)
    locked.chmod(0o500)
    os.symlink("/etc", path / "link-out")


def test_sync_block_removes_the_directory(tmp_path: Path) -> None:
    with workdir("t-", parent=tmp_path) as path:
        assert path.is_dir() and path.name.startswith("t-")
        _litter(path)
    assert not path.exists()
    assert Path("/etc").is_dir()  # the symlink was removed, not followed


def test_exception_still_removes(tmp_path: Path) -> None:
    seen: list[Path] = []

    def fail_inside() -> None:
        with workdir(parent=tmp_path) as path:
            seen.append(path)
            _litter(path)
            raise RuntimeError

    with pytest.raises(RuntimeError):
        fail_inside()
    assert not seen[0].exists()


async def test_async_block_removes(tmp_path: Path) -> None:
    async with workdir(parent=tmp_path) as path:
        _litter(path)
    assert not path.exists()


async def test_cancellation_still_removes(tmp_path: Path) -> None:
    entered = asyncio.Event()
    holder: list[Path] = []

    async def body() -> None:
        async with workdir(parent=tmp_path) as path:
            holder.append(path)
            _litter(path)
            entered.set()
            await asyncio.sleep(60)

    task = asyncio.create_task(body())
    await entered.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not holder[0].exists()


def test_each_use_is_fresh(tmp_path: Path) -> None:
    with workdir(parent=tmp_path) as first, workdir(parent=tmp_path) as second:
        assert first != second

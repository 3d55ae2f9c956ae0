"""A real SQLite file with one run in it, for the store's unit tests."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from ioh_tui.store import Store


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    """A store on a file (WAL, as in use), migrated to the current schema."""
    async with Store.open(tmp_path / "trace.db") as opened:
        yield opened


@pytest.fixture
async def run_id(store: Store) -> int:
    """One root run in `store`."""
    return await store.start_run(
        goal="fix add",
        mode="workspace",
        root="/work/project",
        subject=None,
        contract={"goal": "fix add", "max_steps": 4},
        provider="scripted",
        model="m-1",
        sandbox="floor",
    )

"""How a root harness plans a command's user, binds and covers (`sandbox/user.py`, `_drop.py`)."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from ioh_tui.sandbox import user
from ioh_tui.sandbox._drop import swap_map
from ioh_tui.sandbox.user import ROOT_USER_ENV, Bind, Drop, User


@pytest.fixture
def base() -> Iterator[Path]:
    """A directory everyone can reach (pytest's own temp root is root's alone)."""
    path = Path(tempfile.mkdtemp(prefix="ioh-plan-", dir="/var/tmp"))
    path.chmod(0o755)
    try:
        yield path
    finally:
        shutil.rmtree(path)


def test_a_swap_map_swaps_two_ids_and_keeps_every_other() -> None:
    rows = [tuple(map(int, line.split())) for line in swap_map(0, 65534).splitlines()]
    assert rows == [(0, 65534, 1), (1, 1, 65533), (65534, 0, 1), (65535, 65535, 4294901760)]
    # Every id inside appears once and every id outside once: a bijection over 2**32 - 1 ids.
    assert sum(count for _, _, count in rows) == 4294967295
    assert swap_map(7, 7) == "0 0 4294967295\n"
    assert swap_map(1000, 5).splitlines()[0] == "0 0 5"


def test_not_root_or_root_user_root_plans_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    assert user.plan("linux-bubblewrap", tmp_path, ()) is None
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    monkeypatch.setenv(ROOT_USER_ENV, "root")
    assert user.plan("linux-bubblewrap", tmp_path, ()) is None
    monkeypatch.setenv(ROOT_USER_ENV, "0")
    assert user.plan("linux-bubblewrap", tmp_path, ()) is None


def test_a_closed_directory_above_a_root_is_covered_and_masks_there_are_left_out(
    base: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    monkeypatch.setenv(ROOT_USER_ENV, "54321")
    closed = base / "closed"
    ws = closed / "ws"
    ws.mkdir(parents=True)
    (closed / "sibling").mkdir()
    (ws / "sub").mkdir(mode=0o700)
    closed.chmod(0o700)
    drop = user.plan("linux-bubblewrap", ws, ())
    assert drop is not None and drop.user.uid == 54321
    assert str(closed) in drop.covers
    st = ws.stat()
    assert Bind(str(ws), (st.st_uid, st.st_gid)) in drop.binds
    assert drop.reaches(ws / ".env") and drop.reaches(ws / "sub" / "x")
    assert not drop.reaches(closed / "sibling" / "x") and not drop.reaches(closed / "sibling")


def test_reaching_follows_the_mode_bits_as_the_commands_user(base: Path) -> None:
    nobody = User(65534, 65534, "nobody")
    open_dir, closed_dir = base / "open", base / "closed"
    open_dir.mkdir()
    closed_dir.mkdir()
    closed_dir.chmod(0o750)  # root's group only
    drop = Drop(nobody, (), (), str(base))
    assert drop.reaches(open_dir / "f") and not drop.reaches(closed_dir / "f")
    # Inside a writable root its owner is seen as the command's user.
    owned = Drop(nobody, (Bind(str(closed_dir), (0, 0)),), (), str(closed_dir))
    (closed_dir / "inner").mkdir(mode=0o700)
    assert owned.reaches(closed_dir / "inner" / "f")

"""The descriptor walk: links that stay inside still work, links that leave are refused."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ioh_tui.tools.beneath import locate, read_spot, write_spot
from ioh_tui.tools.workspace import Escape


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "src" / "deep").mkdir(parents=True)
    (ws / "src" / "deep" / "a.txt").write_text("a\n")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "secret").write_text("outside\n")
    os.symlink("src/deep", ws / "rel-dir")
    os.symlink(ws / "src", ws / "abs-dir")
    os.symlink("../ws/src/deep/a.txt", ws / "climb-back")
    os.symlink("deep/a.txt", ws / "src" / "file-link")
    os.symlink(tmp_path / "out", ws / "out-abs")
    os.symlink("../out/secret", ws / "out-rel")
    os.symlink("loop-b", ws / "loop-a")
    os.symlink("loop-a", ws / "loop-b")
    return ws.resolve()


@pytest.mark.parametrize(
    ("rel", "real"),
    [
        ("src/deep/a.txt", "src/deep/a.txt"),
        ("rel-dir/a.txt", "src/deep/a.txt"),
        ("abs-dir/deep/a.txt", "src/deep/a.txt"),
        ("climb-back", "src/deep/a.txt"),
        ("src/file-link", "src/deep/a.txt"),
    ],
)
def test_a_link_that_stays_inside_is_followed(root: Path, rel: str, real: str) -> None:
    with locate(root, rel) as spot:
        assert spot.real == real
        assert read_spot(spot, 100) == b"a\n"


@pytest.mark.parametrize("rel", ["out-abs/secret", "out-rel", "out-abs/new/file", "loop-a"])
def test_a_link_that_leaves_or_loops_is_refused(root: Path, rel: str) -> None:
    with pytest.raises(Escape):
        locate(root, rel, make_dirs=True)


def test_a_write_makes_its_directories_beneath_the_root(root: Path) -> None:
    with locate(root, "rel-dir/new/b.txt", make_dirs=True) as spot:
        write_spot(spot, "b\n")
    assert (root / "src" / "deep" / "new" / "b.txt").read_text() == "b\n"
    assert not list((root / "src" / "deep" / "new").glob(".*.tmp"))

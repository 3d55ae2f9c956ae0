"""Which credential stores the mount-namespace backends hide."""

from __future__ import annotations

from pathlib import Path

import pytest

from ioh_tui.sandbox._masks import secret_paths


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".aws").mkdir()
    (home / ".netrc").write_text("x")
    (home / "project").mkdir()
    monkeypatch.setenv("HOME", str(home))
    return home


def test_existing_stores_inside_a_kept_dir_are_masked(home: Path) -> None:
    dirs, files = secret_paths([home])
    assert sorted(dirs) == sorted([str(home / ".ssh"), str(home / ".aws")])
    assert files == [str(home / ".netrc")]


def test_paths_under_private_tmp_are_not_there_to_mask(home: Path) -> None:
    assert secret_paths([home / "project"]) == ([], [])


def test_a_mask_never_covers_the_workspace(home: Path) -> None:
    dirs, _ = secret_paths([home / ".ssh" / "work", home])
    assert str(home / ".ssh") not in dirs


def test_no_home_no_masks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HOME")
    assert secret_paths([]) == ([], [])

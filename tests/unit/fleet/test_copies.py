"""A workspace copy's patch applied at the root: only through the root's own directories."""

from __future__ import annotations

import hashlib
from pathlib import Path

from ioh_tui.fleet.copies import Change, Patch, apply
from ioh_tui.policy import Policy


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_a_change_is_written_and_a_removal_removes(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "a.txt").write_bytes(b"old")
    (root / "gone.txt").write_bytes(b"bye")
    patch = Patch(
        (
            Change("sub/a.txt", b"new", _digest(b"old")),
            Change("new/b.bin", b"\x00\xff", None),
            Change("gone.txt", None, _digest(b"bye")),
        )
    )
    done = apply(root, patch, Policy.permissive())
    assert done.refused == [] and len(done.applied) == 3
    assert (root / "sub" / "a.txt").read_bytes() == b"new"
    assert (root / "new" / "b.bin").read_bytes() == b"\x00\xff"
    assert not (root / "gone.txt").exists()


def test_a_link_on_the_roots_side_is_refused_not_followed(tmp_path: Path) -> None:
    root, outside = tmp_path / "ws", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "a.txt").write_bytes(b"old")
    (root / "sub").symlink_to(outside)  # planted after the copy was made
    patch = Patch((Change("sub/a.txt", b"new", _digest(b"old")),))
    done = apply(root, patch, Policy.permissive())
    assert done.refused == [("sub/a.txt", "a link on the root's side")]
    assert (outside / "a.txt").read_bytes() == b"old"


def test_the_policy_and_a_concurrent_change_refuse(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "calc.py").write_bytes(b"changed by another agent")
    patch = Patch(
        (
            Change(".env", b"KEY=x", None),
            Change("calc.py", b"mine", _digest(b"as the child found it")),
        )
    )
    done = apply(root, patch, Policy.permissive().deny_write(".env"))
    assert done.refused == [
        (".env", "the policy denies the write"),
        ("calc.py", "changed meanwhile by another agent"),
    ]
    assert not (root / ".env").exists()

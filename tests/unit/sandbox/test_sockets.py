"""Which host unix sockets the mount-namespace rungs cover (`_sockets`)."""

from __future__ import annotations

import socket
from pathlib import Path

from ioh_tui.sandbox._sockets import bound_sockets, runtime_dirs

HEADER = "Num       RefCount Protocol Flags    Type St Inode Path\n"


def _row(path: str) -> str:
    return f"0000000000000000: 00000002 00000000 00010000 0001 01 4242 {path}\n"


def test_only_existing_pathname_sockets_outside_hidden_dirs(tmp_path: Path) -> None:
    real = tmp_path / "with space.sock"
    plain = tmp_path / "plain-file"
    plain.write_text("x")
    table = tmp_path / "unix"
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(real))
        table.write_text(
            HEADER
            + _row(str(real))
            + _row("@abstract")
            + _row("relative.sock")
            + _row(str(plain))
            + _row("/run/hidden/x.sock")
            + "0000000000000000: 00000002 00000000 00000000 0001 01 4243\n"
        )
        # Under /tmp only when inside a kept directory (the rest of /tmp is private inside).
        assert bound_sockets(["/run"], [tmp_path], path=str(table)) == [str(real)]
        assert bound_sockets(["/run"], [], path=str(table)) == []


def test_runtime_dirs_skip_a_kept_path_and_links(tmp_path: Path) -> None:
    found = runtime_dirs([tmp_path])
    assert all(Path(p).resolve() == Path(p) for p in found)
    assert len(found) == len(set(found))
    assert runtime_dirs([Path("/run/anything")]) == [p for p in found if p != "/run"]

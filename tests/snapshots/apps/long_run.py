"""A long run for the tests and pictures: notes, then big reads against a small context window."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ioh_tui.policy import Policy
from ioh_tui.tui.app import IohApp
from tests.tui.harness import build

WINDOW = 3_000
"""Small enough that reading six 2 KB files needs a compaction."""
NOTE: dict[str, Any] = {
    "tool_calls": [{"name": "note", "arguments": {"text": "add subtracts: fix calc.py"}}]
}


def read(i: int, **more: Any) -> dict[str, Any]:
    """A turn reading the i-th big file."""
    return {"tool_calls": [{"name": "read_file", "arguments": {"path": f"f{i}.txt"}}], **more}


def long_run(tmp_path: Path, *, slow_from: int | None = None) -> IohApp:
    """A note, then reads of six big files against a 3,000-token window, then done.

    From the `slow_from`-th read on, the model takes a while to answer, so the screen can be seen
    between a compaction and the call that follows it.
    """
    reads = [
        read(i, delay_ms=700) if slow_from is not None and i >= slow_from else read(i)
        for i in range(6)
    ]
    app = build(
        tmp_path,
        NOTE,
        *reads,
        {"text": "done"},
        criterion=None,
        max_steps=10,
        context_window=WINDOW,
        policy=Policy.permissive(),
    )
    for i in range(6):
        (tmp_path / "project" / f"f{i}.txt").write_text(f"file {i}\n" + "lorem ipsum dolor " * 100)
    return app

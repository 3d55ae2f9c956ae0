"""Hostile tool arguments through the real loop are observations (issue 18, item 7).

A scripted model sends twenty-odd arguments that used to kill the run with a traceback or hang it:
NUL bytes and lone surrogates in paths, content and argv, a file far larger than memory, a FIFO, a
regex that backtracks for ever, paths past PATH_MAX, wrong types. The run goes on to the end, and
every call comes back as a tool result saying what was wrong.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from ioh_tui.engine import TaskContract, run
from ioh_tui.policy import Policy
from ioh_tui.sandbox import select
from ioh_tui.store import Store
from ioh_tui.tools import search
from ioh_tui.verification import NoGate
from tests.integration.engine.helpers import Recorder, scripted

NUL = "holds a NUL byte"
SURROGATE = "lone surrogate"
HOSTILE: list[tuple[str, dict[str, Any], str]] = [
    ("read_file", {"path": "calc\x00.py"}, NUL),
    ("read_file", {"path": "\udc80.py"}, SURROGATE),
    ("write_file", {"path": "a\x00b", "content": "x"}, NUL),
    ("write_file", {"path": "ok.txt", "content": "bad \ud800 text"}, SURROGATE),
    ("edit_file", {"path": "calc.py", "old_text": "\udfff", "new_text": "x"}, SURROGATE),
    ("list_dir", {"path": "\x00"}, NUL),
    ("grep", {"pattern": "x\x00"}, NUL),
    ("grep", {"pattern": "add", "path": "\ud800"}, SURROGATE),
    ("find", {"pattern": "\udc00*"}, SURROGATE),
    ("exec", {"argv": ["echo", "a\x00b"]}, NUL),
    ("exec", {"argv": ["\ud800"]}, SURROGATE),
    ("exec", {"argv": ["true"], "timeout_s": float("nan")}, "positive number"),
    ("exec", {"argv": "rm -rf /"}, "non-empty list"),
    ("read_file", {"path": "huge.bin"}, "over the 67,108,864-byte ceiling"),
    ("grep", {"pattern": "needle"}, "no matches"),
    ("grep", {"pattern": "(a+)+$", "regex": True}, "was stopped"),
    ("grep", {"pattern": "(", "regex": True}, "not a valid regular expression"),
    ("read_file", {"path": "x" * 5000}, "too long"),
    ("write_file", {"path": "a/" * 3000 + "f", "content": "deep"}, "too long"),
    ("read_file", {"path": "pipe"}, "not a regular file"),
    ("read_file", {"path": "calc.py", "start_line": -1}, "positive integer"),
    ("read_file", {"path": 42}, "must be a string"),
    ("read_file", {"path": "."}, "is a directory"),
    ("list_dir", {"path": "calc.py"}, "not a directory"),
]


@pytest.fixture
def hostile_project(project: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    with (project / "huge.bin").open("wb") as handle:
        handle.truncate(64 << 30)  # sparse: 64 GiB by its size, nothing on disk
    os.mkfifo(project / "pipe")
    (project / "backtrack.txt").write_text("a" * 40 + "!\n")
    monkeypatch.setattr(search, "REGEX_TIMEOUT_S", 1.0)
    return project


async def test_every_hostile_argument_comes_back_as_an_observation(hostile_project: Path) -> None:
    turns = [{"tool_calls": [{"name": name, "arguments": args}]} for name, args, _ in HOSTILE]
    recorder = Recorder()
    async with Store.memory() as store:
        result = await run(
            TaskContract.workspace("survive", hostile_project, NoGate()).with_max_steps(
                len(HOSTILE) + 2
            ),
            scripted(*turns, {"text": "still here"}),
            store=store,
            policy=Policy.permissive(),
            sandbox=select("floor"),
            observers=[recorder],
        )
    outputs = [event.output for event in recorder.of("tool_call_finished")]
    assert len(outputs) == len(HOSTILE)
    wrong = [
        (name, output[:160])
        for (name, _, expected), output in zip(HOSTILE, outputs, strict=True)
        if expected not in output
    ]
    assert wrong == []
    assert result.outcome == "finished"
    assert not (hostile_project / "ok.txt").exists()

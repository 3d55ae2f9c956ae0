"""A file with other names (hard links) is not read or written as a name the policy allows."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from ioh_tui.engine import TaskContract, run
from ioh_tui.policy import Policy
from ioh_tui.sandbox import select
from ioh_tui.store import Store
from ioh_tui.verification import NoGate
from tests.integration.engine.helpers import scripted

CALLS: list[dict[str, Any]] = [
    {"name": "read_file", "arguments": {"path": "notes.txt"}},
    {"name": "grep", "arguments": {"pattern": "SECRET"}},
    {"name": "grep", "arguments": {"pattern": "SECRET", "path": "notes.txt"}},
    {"name": "edit_file", "arguments": {"path": "notes.txt", "old_text": "S", "new_text": "s"}},
    {"name": "write_file", "arguments": {"path": "notes.txt", "content": "SECRET=hunter2\n"}},
]


@pytest.fixture
def linked(project: Path) -> Path:
    """`.env` (denied by the built-in secrets) with a second name, `notes.txt`."""
    (project / ".env").write_text("SECRET=hunter2\n")
    os.link(project / ".env", project / "notes.txt")
    return project


async def _outputs(root: Path, policy: Policy) -> list[str]:
    async with Store.memory() as store:
        result = await run(
            TaskContract.workspace("look", root, NoGate()),
            scripted({"text": "Looking.", "tool_calls": CALLS}, {"text": "Done."}),
            store=store,
            policy=policy,
            sandbox=select("floor"),
        )
        return [c.output for c in await store.tool_calls(result.run_id)]


async def test_a_second_name_of_a_denied_file_is_neither_read_nor_written(linked: Path) -> None:
    policy = Policy.default().allow_write("*")
    read, grep_all, grep_one, edit, write = await _outputs(linked, policy)
    assert read.startswith("[read notes.txt refused]") and "hard links" in read
    assert "hunter2" not in read + grep_all + grep_one + edit + write
    assert "no matches" in grep_all and "no matches" in grep_one
    assert edit.startswith("[edit notes.txt refused]")
    assert write.startswith("[write notes.txt refused]")
    assert (linked / ".env").read_text() == "SECRET=hunter2\n"
    assert os.stat(linked / "notes.txt").st_nlink == 2


async def test_a_rule_naming_the_path_exactly_lets_the_tools_use_it(linked: Path) -> None:
    policy = Policy.default().allow_read("notes.txt")
    read, grep_all, *_ = await _outputs(linked, policy)
    assert read.startswith("[read notes.txt]") and "hunter2" in read
    assert "notes.txt:1:" in grep_all


async def test_a_policy_that_refuses_no_name_reads_it(linked: Path) -> None:
    read, *_ = await _outputs(linked, Policy.permissive())
    assert "hunter2" in read


async def test_a_broad_allow_does_not_name_it(linked: Path) -> None:
    read, *_ = await _outputs(linked, Policy.default().allow_read("*"))
    assert read.startswith("[read notes.txt refused]")

"""Replaying an interrupted step from its journal, read back from a real (in-memory) store.

What a resume does with each journalled call of the step a crash cut: a finished call's result is
reused, a write whose content is on disk happened, one whose content is not must run, and the
effect of a command or an MCP call cannot be known (the operator decides).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from ioh_tui.core.transcript import Image, ToolCall
from ioh_tui.engine.contract import TaskContract
from ioh_tui.engine.decide import DecisionRules
from ioh_tui.engine.recovery import INTERRUPTED, journal_form, replay
from ioh_tui.engine.session import resumed_state
from ioh_tui.policy import Policy
from ioh_tui.store import Store
from ioh_tui.tools import ToolResult
from ioh_tui.tools.files import content_hash
from ioh_tui.tools.registry import EXEC as EXEC_TOOL
from ioh_tui.tools.registry import WRITE_FILE
from ioh_tui.verification import NoGate

WRITE = ToolCall("c1", "write_file", {"path": "a.txt", "content": "new\n"})
EXEC = ToolCall("c2", "exec", {"argv": ["make", "deploy"]})
WRITES = WRITE_FILE.cut_ask is not None
"""False: a write journals its intent, so a cut one is judged by what is on disk."""
EXECS = EXEC_TOOL.cut_ask is not None
"""True: a command's effect cannot be known."""


@pytest.fixture
async def store() -> AsyncIterator[Store]:
    async with Store.memory() as opened:
        yield opened


async def _journal(
    store: Store,
    root: Path,
    call: ToolCall,
    *,
    intent: bool = False,
    result: bool = False,
    done: ToolResult | None = None,
) -> dict[tuple[int, int], Any]:
    """The journal a resume reads back for step 1, after `call` (position 0) got this far."""
    contract = TaskContract.workspace("g", root, NoGate())
    run_id = await store.start_run(
        goal="g",
        mode="workspace",
        root=str(root),
        subject=None,
        contract=contract.to_dict(),
        provider="scripted",
        model=None,
        sandbox="floor",
    )
    opened = await store.open_attempt(run_id, 1, 0, call.id, call.name, dict(call.arguments))
    if intent:
        sha = content_hash("new\n")
        await store.note_intent(opened, {"path": "a.txt", "sha256": sha, "output": "wrote a.txt"})
    if result:
        form = journal_form(done or ToolResult("wrote a.txt (4 bytes)", changed=True))
        await store.close_attempt(opened, form)
    state, last = await resumed_state(store, run_id, contract, DecisionRules(Policy()), 0)
    assert last == 0
    return state.journal


async def test_a_finished_call_is_reused_not_run_again(store: Store, tmp_path: Path) -> None:
    journal = await _journal(store, tmp_path, WRITE, intent=True, result=True)

    replayed = replay(journal, tmp_path, 1, 0, WRITE, unknowable=WRITES)

    assert replayed == ToolResult("wrote a.txt (4 bytes)", changed=True)


async def test_a_write_whose_content_is_on_disk_happened(store: Store, tmp_path: Path) -> None:
    journal = await _journal(store, tmp_path, WRITE, intent=True)
    (tmp_path / "a.txt").write_text("new\n")

    assert replay(journal, tmp_path, 1, 0, WRITE, unknowable=WRITES) == ToolResult(
        "wrote a.txt", changed=True
    )


async def test_a_write_whose_content_is_not_on_disk_runs(store: Store, tmp_path: Path) -> None:
    journal = await _journal(store, tmp_path, WRITE, intent=True)
    (tmp_path / "a.txt").write_text("old\n")

    assert replay(journal, tmp_path, 1, 0, WRITE, unknowable=WRITES) is None


async def test_an_open_command_is_left_to_the_operator(store: Store, tmp_path: Path) -> None:
    journal = await _journal(store, tmp_path, EXEC)

    assert replay(journal, tmp_path, 1, 0, EXEC, unknowable=EXECS) is INTERRUPTED


async def test_a_different_call_at_that_position_runs(store: Store, tmp_path: Path) -> None:
    journal = await _journal(store, tmp_path, WRITE, intent=True, result=True)
    other = ToolCall("c1", "write_file", {"path": "a.txt", "content": "other\n"})

    assert replay(journal, tmp_path, 1, 0, other, unknowable=WRITES) is None
    assert replay(journal, tmp_path, 1, 1, WRITE, unknowable=WRITES) is None


async def test_a_finished_calls_images_come_back_with_it(store: Store, tmp_path: Path) -> None:
    # An MCP tool's image rides on its result: a replayed call sends the model the same image.
    call = ToolCall("c3", "mcp__fx__photo", {})
    shown = Image("image/png", b"\x89PNG\r\n\x1a\n\x00\xff", "fx/photo image 1", 3, 2)
    done = ToolResult("a grey photo", images=(shown,))
    journal = await _journal(store, tmp_path, call, result=True, done=done)

    assert replay(journal, tmp_path, 1, 0, call, unknowable=True) == done


async def test_an_open_mcp_call_is_left_to_the_operator(store: Store, tmp_path: Path) -> None:
    # Its effect on whatever the server reaches cannot be known either (the tool's `cut_ask`).
    call = ToolCall("c4", "mcp__fx__create", {"title": "x"})
    journal = await _journal(store, tmp_path, call)

    assert replay(journal, tmp_path, 1, 0, call, unknowable=True) is INTERRUPTED
    assert replay(journal, tmp_path, 1, 0, call, unknowable=False) is None

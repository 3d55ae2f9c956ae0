"""A staged model turn: written by the codec, and still read when written by older code."""

from __future__ import annotations

import json
import sqlite3

import aiosqlite
import pytest

from ioh_tui.core.transcript import Completion, ToolCall, Usage
from ioh_tui.store import CallRecord, StepCommit, Store

# Exactly what `engine/recovery.completion_to_dict` stored before the codec: no ttft/latency keys,
# the argument error under "error".
OLDER = {
    "text": "Running it.",
    "thinking": "",
    "tool_calls": [
        {"id": "c1", "name": "exec", "arguments": {}, "error": '{"argv": ["make"'},
        {"id": "c2", "name": "read_file", "arguments": {"path": "a.txt"}, "error": None},
    ],
    "usage": {
        "input_tokens": 50,
        "output_tokens": 9,
        "cache_read_tokens": 0,
        "cache_write_tokens": 0,
        "reasoning_tokens": 0,
        "cost_usd": None,
    },
    "stop_reason": "tool_calls",
    "model": "m-1",
}


async def test_a_turn_staged_by_older_code_still_loads(store: Store, run_id: int) -> None:
    async with aiosqlite.connect(store.path) as db:
        await db.execute(
            "INSERT INTO staged_turns (run_id, step, completion) VALUES (?,?,?)",
            (run_id, 3, json.dumps(OLDER)),
        )
        await db.commit()
    staged = await store.staged_turn(run_id, 3)
    assert staged == Completion(
        text="Running it.",
        tool_calls=(
            ToolCall("c1", "exec", {}, arguments_error='{"argv": ["make"'),
            ToolCall("c2", "read_file", {"path": "a.txt"}),
        ),
        usage=Usage(50, 9),
        stop_reason="tool_calls",
        model="m-1",
    )


async def test_a_staged_turn_reads_back_until_its_step_commits(store: Store, run_id: int) -> None:
    turn = Completion("Done.", tool_calls=(ToolCall("c9", "exec", {}, "argv="),), ttft_ms=12.0)
    assert await store.staged_turn(run_id, 1) is None
    await store.stage_turn(run_id, 1, turn)
    assert await store.staged_turn(run_id, 1) == turn
    done = CallRecord("c9", "exec", {}, False, False, "[exec error]", "")
    await store.commit_step(StepCommit(run_id, 1, "", "", 0, 0, None, [], [done]))
    assert await store.staged_turn(run_id, 1) is None


async def test_a_turn_is_staged_with_its_accounting_in_one_transaction(
    store: Store, run_id: int
) -> None:
    turn = Completion("Looking.", usage=Usage(40, 5))
    row = {"attempt": 1, "provider": "scripted", "model": "m-1", "input_tokens": 40}
    await store.stage_turn(run_id, 1, turn, [row])
    assert await store.staged_turn(run_id, 1) == turn
    (call,) = await store.provider_calls(run_id)
    assert (call.step, call.provider, call.input_tokens) == (1, "scripted", 40)
    # A row that cannot be written undoes the whole transaction: no turn without its cost.
    with pytest.raises(sqlite3.OperationalError):
        await store.stage_turn(run_id, 2, turn, [{**row, "no_such_column": 1}])
    assert await store.staged_turn(run_id, 2) is None
    assert len(await store.provider_calls(run_id)) == 1

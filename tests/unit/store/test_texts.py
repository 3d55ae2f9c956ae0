"""A long observation is stored once (schema 6), deflated (schema 7): transcript, call and event
refer to it."""

from __future__ import annotations

import hashlib
import sqlite3

import pytest

from ioh_tui.core.transcript import Message, ToolCall
from ioh_tui.store import CallRecord, StepCommit, Store, StoreError

OUTPUT = "[read a.txt] (8 lines)\n" + "line of a.txt, long enough to be shared\n" * 8
READ = ToolCall("c1", "read_file", {"path": "a.txt"})


def _step(run_id: int, step: int) -> StepCommit:
    messages = (Message("assistant", "Reading.", (READ,)), Message("tool", OUTPUT, (), "c1"))
    record = CallRecord("c1", "read_file", {"path": "a.txt"}, True, False, "[read a.txt]", OUTPUT)
    return StepCommit(run_id, step, "[read a.txt]", "read_file:{}", 10, 5, None, messages, [record])


async def test_an_observation_is_stored_once_and_reads_back_whole(
    store: Store, run_id: int
) -> None:
    finished = {"event": "tool_call_finished", "step": 1, "output": OUTPUT, "ok": True}
    await store.add_events([(run_id, None, "tool_call_finished", finished)])
    await store.commit_step(_step(run_id, 1))
    await store.commit_step(_step(run_id, 2))  # the same file read again: the same row
    with sqlite3.connect(store.path) as raw:
        assert raw.execute("SELECT COUNT(*) FROM texts").fetchone() == (1,)
        held = raw.execute(
            "SELECT (SELECT SUM(LENGTH(content)) FROM messages)"
            " + (SELECT SUM(LENGTH(output)) FROM tool_calls)"
            " + (SELECT SUM(LENGTH(json)) FROM events)"
        ).fetchone()[0]
    assert held < len(OUTPUT)  # no row but `texts` holds the text
    assert [m.content for m in await store.messages(run_id)][1::2] == [OUTPUT, OUTPUT]
    assert [c.output for c in await store.tool_calls(run_id)] == [OUTPUT, OUTPUT]
    (event,) = await store.events(run_id)
    assert event.json == finished  # the same keys, in the same order
    assert list(event.json) == list(finished)


async def test_a_short_text_stays_in_its_row(store: Store, run_id: int) -> None:
    await store.add_events([(run_id, None, "step_started", {"step": 1, "note": "short"})])
    with sqlite3.connect(store.path) as raw:
        assert raw.execute("SELECT COUNT(*) FROM texts").fetchone() == (0,)
        assert raw.execute("SELECT texts FROM events").fetchone() == (None,)
    (event,) = await store.events(run_id)
    assert event.json == {"step": 1, "note": "short"}


async def test_a_kept_text_is_deflated_and_found_by_the_digest_of_the_text(
    store: Store, run_id: int
) -> None:
    await store.commit_step(_step(run_id, 1))
    with sqlite3.connect(store.path) as raw:
        kind, size, digest = raw.execute(
            "SELECT typeof(text), length(text), digest FROM texts"
        ).fetchone()
    assert (kind, digest) == ("blob", hashlib.sha256(OUTPUT.encode()).digest())
    assert size < len(OUTPUT) / 4  # eight lines alike deflate to far less than the text
    assert [m.content for m in await store.messages(run_id)][1] == OUTPUT


async def test_a_text_kept_by_schema_6_reads_and_is_found_again(store: Store, run_id: int) -> None:
    with sqlite3.connect(store.path) as raw:
        raw.execute(
            "INSERT INTO texts (id, digest, text) VALUES (7, ?, ?)",
            (hashlib.sha256(OUTPUT.encode()).digest(), OUTPUT),
        )
    await store.commit_step(_step(run_id, 1))  # the same text: schema 6's row, as it is
    with sqlite3.connect(store.path) as raw:
        assert raw.execute("SELECT id, typeof(text) FROM texts").fetchall() == [(7, "text")]
    assert [c.output for c in await store.tool_calls(run_id)] == [OUTPUT]


async def test_a_damaged_kept_text_is_one_line(store: Store, run_id: int) -> None:
    await store.commit_step(_step(run_id, 1))
    with sqlite3.connect(store.path) as raw:
        raw.execute("UPDATE texts SET text = x'00ff'")
    with pytest.raises(StoreError, match=r"is damaged: run \d+'s message is not a kept text"):
        await store.messages(run_id)

"""An event row keeps its JSON without what its columns hold or its key names, and reads back
byte for byte."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ioh_tui.core import events as ev
from ioh_tui.store import Store, StoreError
from ioh_tui.store.eventrows import pack, unpack

LONG = "a line of output, long enough to be kept in texts\n" * 8


async def test_engine_events_read_back_exactly_and_are_stored_without_their_columns(
    store: Store, run_id: int
) -> None:
    written = [
        ev.to_json(ev.StepStarted(run_id=run_id, step=1)),
        ev.to_json(
            ev.ToolCallFinished(
                run_id=run_id, step=1, call_id="c1", name="read_file", ok=True, refused=False,
                summary="[read a.txt]", output=LONG,
            )
        ),
        # In a tree: `parent_id` has no column, so `step` after it stays in the JSON.
        ev.to_json(ev.StepStarted(run_id=run_id, agent_id=run_id, parent_id=7, step=2)),
        ev.to_json(
            ev.UsageReported(
                run_id=run_id, step=2, input_tokens=5, output_tokens=1, ttft_ms=0.1 + 0.2,
                latency_ms=None, cost_usd=1e-7,
            )
        ),
    ]  # fmt: skip
    await store.add_events([(run_id, e.get("agent_id"), e["event"], e) for e in written])
    read = [e.json for e in await store.events(run_id)]
    assert [json.dumps(e) for e in read] == [json.dumps(e) for e in written]
    with sqlite3.connect(store.path) as raw:
        stored = [row[0] for row in raw.execute("SELECT json FROM events ORDER BY id")]
    assert stored[0] == '["ers",{}]'
    assert not any(f'"{key}"' in s for s in stored for e in written for key in e)
    # In a tree: `parent_id` has no column, so `step` after it is kept, by its value.
    (names,) = [k for (k,) in raw.execute("SELECT keys FROM event_keys WHERE keys LIKE '[\"p%'")]
    assert json.loads(names) == ["parent_id", "step"]
    assert stored[2].startswith('["era",') and stored[2].endswith(",7,2]")


async def test_rows_written_by_older_code_read_as_before(store: Store, run_id: int) -> None:
    older = {"event": "step_started", "run_id": run_id, "step": 3}
    schema_6 = {"event": "usage", "run_id": run_id, "step": 3, "input_tokens": 5}
    with sqlite3.connect(store.path) as raw:
        raw.executemany(
            "INSERT INTO events (run_id, agent_id, step, kind, json) VALUES (?,?,?,?,?)",
            [
                (run_id, None, 3, "step_started", json.dumps(older)),  # before schema 6
                (run_id, None, 3, "usage", '["ers",{"input_tokens":5}]'),  # schema 6
            ],
        )
    events = await store.events(run_id)
    assert [json.dumps(e.json) for e in events] == [json.dumps(older), json.dumps(schema_6)]


async def test_a_batch_rolled_back_leaves_no_key_names_behind(tmp_path: Path) -> None:
    db = tmp_path / "trace.db"
    first = {"event": "usage", "run_id": 1, "step": 1, "input_tokens": 5, "note": "a"}
    async with Store.open(db) as store:
        unwritable = {**first, "step": 2, "note": object()}  # not JSON: the batch fails
        with pytest.raises(TypeError):
            await store.add_events([(1, None, "usage", first), (1, None, "usage", unwritable)])
        with sqlite3.connect(db) as raw:
            assert raw.execute("SELECT COUNT(*) FROM event_keys").fetchone() == (0,)
        # Another process takes the id the failed batch had given its names: had that id been
        # kept, the next row would name the wrong keys.
        with sqlite3.connect(db) as raw:
            raw.execute("INSERT INTO event_keys (keys) VALUES ('[\"other\"]')")
        await store.add_events([(1, None, "usage", first)])
        assert [e.json for e in await store.events(1)] == [first]
    async with Store.open(db) as again:  # a new process finds the names it stored
        await again.add_events([(1, None, "usage", {**first, "step": 2})])
        assert [e.json["step"] for e in await again.events(1)] == [1, 2]
    with sqlite3.connect(db) as raw:
        assert raw.execute("SELECT COUNT(*) FROM event_keys").fetchone() == (2,)


async def test_a_row_naming_unknown_keys_is_a_damaged_store(store: Store, run_id: int) -> None:
    with sqlite3.connect(store.path) as raw:
        raw.execute(
            "INSERT INTO events (run_id, agent_id, step, kind, json) VALUES (?,?,?,?,?)",
            (run_id, None, 3, "usage", '["ers",99,5]'),
        )
    with pytest.raises(StoreError, match=r"damaged: event \d+ its key names 99"):
        await store.events(run_id)


_KEYS = st.sampled_from(["event", "run_id", "agent_id", "step", "parent_id", "text"])
_VALUES = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.floats(0, 2), st.text())


@settings(max_examples=300, deadline=None)
@given(
    data=st.dictionaries(_KEYS, _VALUES, max_size=6),
    kind=st.sampled_from(["step_started", "usage", ""]),
    run_id=st.integers(-3, 3),
    agent_id=st.one_of(st.none(), st.integers(-3, 3)),
)
def test_any_object_packs_and_unpacks_to_itself(
    data: dict[str, Any], kind: str, run_id: int, agent_id: int | None
) -> None:
    lists: dict[tuple[str, ...], int] = {}
    # What the row's columns give back: `step` is written from the object itself.
    step = data.get("step")
    column = None if step is None else (int(step) if isinstance(step, bool) else step)
    for names in (None, lambda keys: lists.setdefault(keys, len(lists))):
        stored = pack(data, kind=kind, run_id=run_id, agent_id=agent_id, names=names)
        back = unpack(
            json.loads(stored),
            kind=kind,
            run_id=run_id,
            agent_id=agent_id,
            step=column,
            names={i: keys for keys, i in lists.items()},
        )
        assert json.dumps(back) == json.dumps(data)

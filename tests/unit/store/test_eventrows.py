"""An event row keeps its JSON without what its columns hold, and reads back byte for byte."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from ioh_tui.core import events as ev
from ioh_tui.store import Store
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
    assert not any('"event"' in s or '"run_id"' in s for s in stored)
    assert stored[2].startswith('["era",{"parent_id":7,"step":2')


async def test_a_row_written_by_schema_6_code_reads_as_before(store: Store, run_id: int) -> None:
    older = {"event": "step_started", "run_id": run_id, "step": 3}
    with sqlite3.connect(store.path) as raw:
        raw.execute(
            "INSERT INTO events (run_id, agent_id, step, kind, json) VALUES (?,?,?,?,?)",
            (run_id, None, 3, "step_started", json.dumps(older)),
        )
    (event,) = await store.events(run_id)
    assert json.dumps(event.json) == json.dumps(older)


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
    stored = pack(data, kind=kind, run_id=run_id, agent_id=agent_id)
    # What the row's columns give back: `step` is written from the object itself.
    step = data.get("step")
    column = None if step is None else (int(step) if isinstance(step, bool) else step)
    back = unpack(json.loads(stored), kind=kind, run_id=run_id, agent_id=agent_id, step=column)
    assert json.dumps(back) == json.dumps(data)

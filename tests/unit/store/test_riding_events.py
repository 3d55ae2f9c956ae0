"""Events riding on a step's transaction: in the log's order, kept when the step is not, and
never the reason a step fails."""

from __future__ import annotations

import sqlite3

import pytest

from ioh_tui.core.errors import ConflictError
from ioh_tui.core.transcript import Completion, Message
from ioh_tui.store import LoggedEvent, StepCommit, Store


def _step(run_id: int, step: int, owner: str | None = None) -> StepCommit:
    messages = (Message("assistant", "Done."),)
    return StepCommit(run_id, step, "no tool call", "", 1, 1, None, messages, (), owner, 1)


def _event(run_id: int, step: int, kind: str, **more: object) -> LoggedEvent:
    return (run_id, None, kind, {"event": kind, "run_id": run_id, "step": step, **more})


async def test_riding_events_are_logged_in_order_with_the_others(store: Store, run_id: int) -> None:
    await store.add_events([_event(run_id, 1, "step_started")])
    await store.stage_turn(
        run_id, 1, Completion("Done."), logged=[_event(run_id, 1, "usage", input_tokens=1)]
    )
    await store.commit_step(_step(run_id, 1), [_event(run_id, 1, "tool_call_started", n=1)])
    await store.add_events([_event(run_id, 1, "step_finished", tokens=2)])
    kinds = [e.kind for e in await store.events(run_id)]
    assert kinds == ["step_started", "usage", "tool_call_started", "step_finished"]
    assert len(await store.steps(run_id)) == 1


async def test_a_step_not_written_keeps_its_riding_events(store: Store, run_id: int) -> None:
    await store.acquire_lease(run_id, "first", 60)
    lost = _step(run_id, 1, owner="another")  # a driver that lost the lease writes no step
    with pytest.raises(ConflictError):
        await store.commit_step(lost, [_event(run_id, 1, "tool_call_finished", ok=True)])
    assert await store.steps(run_id) == []
    assert [e.json["ok"] for e in await store.events(run_id)] == [True]


async def test_events_that_cannot_be_written_do_not_fail_the_step(
    store: Store, run_id: int, caplog: pytest.LogCaptureFixture
) -> None:
    bad = _event(run_id, 1, "usage", note=object())  # not JSON
    await store.commit_step(_step(run_id, 1), [_event(run_id, 1, "step_started"), bad])
    assert len(await store.steps(run_id)) == 1
    assert await store.events(run_id) == []  # the batch is undone whole
    assert "could not log the events" in caplog.text
    with sqlite3.connect(store.path) as raw:  # and so are the key names it added
        assert raw.execute("SELECT COUNT(*) FROM event_keys").fetchone() == (0,)
    await store.add_events([_event(run_id, 2, "usage", note="fine")])
    assert [e.json["note"] for e in await store.events(run_id)] == ["fine"]

"""A run that carries on earlier runs' conversation (`NewRun.continues`), new and resumed."""

from __future__ import annotations

from pathlib import Path

from ioh_tui.engine import NewRun, Parts, TaskContract, resume, start
from ioh_tui.policy import Decision, DeferAll
from ioh_tui.sandbox import select
from ioh_tui.store import Store
from tests.integration.engine.helpers import scripted

WRITE = {"name": "write_file", "arguments": {"path": "out.txt", "content": "x\n"}}


async def test_a_continued_run_reads_the_earlier_turns_and_a_resume_rebuilds_them(
    project: Path, tmp_path: Path
) -> None:
    floor = select("floor")
    async with Store.open(tmp_path / "s.db") as store:
        first = await start(
            NewRun(TaskContract.workspace("say one", project)),
            Parts(scripted({"text": "one."}), store, sandbox=floor),
        )
        # The second run's script goes on from the conversation's second assistant turn.
        model = scripted({"text": "unused"}, {"text": "writing.", "tool_calls": [WRITE]})
        paused = await start(
            NewRun(TaskContract.workspace("now write", project), continues=(first.run_id,)),
            Parts(model, store, approver=DeferAll(), sandbox=floor),
        )
        assert paused.outcome == "awaiting_approval"
        said = [(m.role, m.content) for m in model.requests[0].messages[2:]]
        assert said == [("user", "say one"), ("assistant", "one."), ("user", "now write")]

        # Another drive (as another process would) resumes it: the same conversation, rebuilt.
        again = scripted({"text": "unused"}, {"text": "unused"}, {"text": "written."})
        done = await resume(
            paused.run_id, again, store=store, decision=Decision.approve(), sandbox=floor
        )
        row = await store.run(paused.run_id)
        own = [m.content for m in await store.messages(paused.run_id)]
    assert done.outcome == "finished"
    assert (project / "out.txt").read_text() == "x\n"
    sent = [(m.role, m.content) for m in again.requests[0].messages[2:]]
    assert sent[:4] == [
        ("user", "say one"),
        ("assistant", "one."),
        ("user", "now write"),
        ("assistant", "writing."),
    ]
    assert sent[4][0] == "tool" and len(sent) == 5
    assert row.contract["continues"] == [first.run_id]
    assert own[0] == "writing." and "say one" not in own

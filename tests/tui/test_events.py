"""Event handling the scripted runs do not reach on their own: retries, sub-agent trees."""

from __future__ import annotations

from pathlib import Path

from ioh_tui.core import events as ev
from ioh_tui.engine import Containment, TaskContract
from ioh_tui.providers import ScriptedProvider
from ioh_tui.providers.testing.scenario import parse_scenario
from ioh_tui.sandbox import select
from ioh_tui.tui.factory import make_app
from ioh_tui.tui.widgets.agent_text import AgentText
from ioh_tui.tui.widgets.tool_call import ToolCall
from tests.tui.harness import READ_CALC, USAGE, build, calc_project, finished, run_screen, until

SLOW = {"text": "", "delay_ms": 60_000}
THE_ANSWER = "A whole answer."


async def test_a_retry_voids_the_text_streamed_so_far(tmp_path: Path) -> None:
    app = build(tmp_path, SLOW)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = run_screen(app)
        await until(pilot, lambda: screen.totals.step == 1)
        await screen.handle(ev.TextDelta(run_id=1, step=1, text="Half an ans"), None)
        await screen.handle(
            ev.RetryScheduled(run_id=1, step=1, attempt=1, error_kind="transport", delay_ms=500),
            None,
        )
        await screen.handle(ev.TextDelta(run_id=1, step=1, text="A whole answer."), None)
        await screen.transcript.close_stream(None)
        assert screen.transcript.text_of(1) == "A whole answer."
        # Blocks are mounted in batches: wait for this one's.
        await until(pilot, lambda: [b.source for b in screen.query(AgentText)] == [THE_ANSWER])
        notes = [str(n.render()) for n in screen.query(".note.-retry")]
        assert len(notes) == 1 and "attempt 1 failed (transport)" in notes[0]


async def test_sub_agents_are_labelled_and_do_not_move_the_root_meters(tmp_path: Path) -> None:
    project = calc_project(tmp_path / "project")
    scenario = parse_scenario(
        {
            "model": "tree-model",
            "turns": [
                {
                    "tool_calls": [
                        {
                            "name": "spawn_agent",
                            "arguments": {"goal": "survey calc", "max_steps": 2},
                        }
                    ],
                    "usage": USAGE,
                },
                {"text": "done", "usage": USAGE},
            ],
            "agents": {
                "survey": {
                    "turns": [
                        {"text": "Reading.", "tool_calls": [READ_CALC]},
                        {"text": "It subtracts."},
                    ]
                }
            },
        }
    )
    app = make_app(
        tmp_path / "store.db",
        contract=TaskContract.workspace("survey then finish", project),
        provider=ScriptedProvider(scenario),
        sandbox=select("floor"),
        containment=Containment(max_total_agents=2, max_concurrent=2, max_depth=1),
    )
    app.animation_level = "none"
    async with app.run_test(size=(100, 30)) as pilot:
        await finished(pilot)
        screen = run_screen(app)
        lines = [c.line for c in screen.query(ToolCall)]
        child_text = [b.source for b in screen.query(AgentText) if b.agent is not None]
        assert screen.totals.step == 2  # the child's two steps are not the root's
        notes = " ".join(str(n.render()) for n in screen.query(".note.-agent"))
    assert app.result is not None and app.result.outcome == "finished"
    assert lines[0].startswith("spawn agent: survey calc")
    assert any(line.startswith("[agent ") and line.endswith("read calc.py") for line in lines)
    assert any(text.startswith("**[agent ") and "Reading." in text for text in child_text)
    assert "spawned: survey calc" in notes and "finished:" in notes

"""Long runs in the app: the context meter, compaction blocks and their summaries, notes, stalls.

Each test drives the real app over the real engine with a scripted model; a small context window
makes the engine compact the run's older turns, as it would a day-long run's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.app import App, ComposeResult
from textual.message import Message
from textual.widgets import Static

from ioh_tui.core import events as ev
from ioh_tui.engine import Containment, NewRun, TaskContract, run
from ioh_tui.engine.prompts import NOTES_SHOWN
from ioh_tui.policy import DeferAll, Policy
from ioh_tui.providers import ScriptedProvider
from ioh_tui.providers.fallback import Fallback
from ioh_tui.providers.testing.scenario import parse_scenario
from ioh_tui.sandbox import select
from ioh_tui.store import Store
from ioh_tui.tui.app import IohApp
from ioh_tui.tui.app_run import AppRun
from ioh_tui.tui.describe import tokens
from ioh_tui.tui.factory import make_app
from ioh_tui.tui.messages import EngineEventMessage
from ioh_tui.tui.screens.summary import SummaryModal
from ioh_tui.tui.widgets.compaction import Compaction
from ioh_tui.tui.widgets.meter import Meter
from ioh_tui.tui.widgets.notes import Notes
from ioh_tui.verification import NoGate
from tests.snapshots.apps.long_run import WINDOW, long_run
from tests.tui.harness import (
    FIX_CALC,
    READ_CALC,
    USAGE,
    build,
    calc_project,
    finished,
    modal,
    notifications,
    run_screen,
    scripted,
    until,
)
from tests.tui.stored_runs import resumer_with

SIZE = (100, 32)


def shown(messages: list[Message], kind: type[ev.Event]) -> list[Any]:
    """The engine events of a kind that reached the run screen, each once."""
    found = {
        id(event): event
        for m in messages
        if isinstance(m, EngineEventMessage)
        for event in m.events
        if isinstance(event, kind)
    }
    return list(found.values())


def meter_reading(app: IohApp) -> str:
    """What the context meter reads."""
    return run_screen(app).query_one("#meter-context", Meter).reading


async def test_the_context_meter_reads_the_last_prompt_and_the_room_a_compaction_made(
    tmp_path: Path,
) -> None:
    app = long_run(tmp_path, slow_from=3)
    seen: list[Message] = []
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        assert meter_reading(app) == "–"  # before the run starts: no window yet
        await until(pilot, lambda: bool(run_screen(app).query(Compaction)))
        (compacted,) = shown(seen, ev.ContextCompacted)
        # Between the compaction and the next call's report: the room the compaction left.
        assert meter_reading(app) == f"{tokens(compacted.tokens_after)} / 3.0k"
        await finished(pilot)
        last = shown(seen, ev.UsageReported)[-1]
        assert meter_reading(app) == f"{tokens(last.input_tokens)} / 3.0k"
        meter = run_screen(app).query_one("#meter-context", Meter)
        assert (meter.value, meter.limit) == (last.input_tokens, WINDOW)


@pytest.mark.parametrize(
    ("prompt", "state", "marks"),
    [(1_500, "", ""), (2_400, "-warn", " !"), (2_800, "-danger", " !!")],
)
async def test_the_meter_turns_to_a_warning_near_the_window(
    tmp_path: Path, prompt: int, state: str, marks: str
) -> None:
    # The provider's report is what the meter shows: 80 % of the window warns, 90 % is danger.
    usage = {"input_tokens": prompt, "output_tokens": 5}
    app = build(
        tmp_path,
        {"text": "done", "usage": usage},
        criterion=None,
        context_window=WINDOW,
    )
    async with app.run_test(size=SIZE) as pilot:
        await finished(pilot)
        meter = run_screen(app).query_one("#meter-context", Meter)
        assert meter.state == state
        assert meter.has_class("-warn") == (state == "-warn")
        assert meter.has_class("-danger") == (state == "-danger")
        assert meter.render().plain.splitlines()[0].endswith(f"{tokens(prompt)} / 3.0k{marks}")


@pytest.mark.slow
async def test_a_compaction_is_a_block_at_its_step_whose_summary_is_one_key_away(
    tmp_path: Path,
) -> None:
    app = long_run(tmp_path)
    seen: list[Message] = []
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        await finished(pilot)
        screen = run_screen(app)
        (compacted,) = shown(seen, ev.ContextCompacted)
        (block,) = screen.query(Compaction)
        assert str(block.content) == (
            f"context compacted at step {compacted.step}: {compacted.tokens_before:,} → "
            f"{compacted.tokens_after:,} tokens"
        )
        # At its step: after the step's header, before the step's tool call.
        blocks = list(screen.transcript.children)
        header = next(
            b
            for b in blocks
            if isinstance(b, Static)
            and b.has_class("step-header")
            and str(b.content) == f"step {compacted.step}"
        )
        assert blocks.index(header) < blocks.index(block)
        async with Store.open(tmp_path / "store.db") as store:
            (summary,) = await store.summaries(compacted.run_id)
        # c, from anywhere in the run view: the stored summary.
        await pilot.press("c")
        await until(pilot, lambda: isinstance(app.screen, SummaryModal))
        modal = app.screen
        assert isinstance(modal, SummaryModal)
        assert modal.summary == summary.text and summary.text.startswith("Made ")
        assert modal.turns == summary.turns
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is screen)
        assert app.run_screen is screen  # escape closed the summary; the view is still there
        # Enter on the focused block: the same summary.
        block.focus()
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, SummaryModal))
        assert isinstance(app.screen, SummaryModal) and app.screen.summary == summary.text


async def test_the_summary_key_is_offered_only_once_there_is_a_compaction(
    tmp_path: Path,
) -> None:
    app = long_run(tmp_path, slow_from=0)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: run_screen(app).status.activity.startswith("step 2"))
        assert "summary" not in {b.binding.action for b in app.screen.active_bindings.values()}
        await pilot.press("c")  # nothing to open yet
        await pilot.pause()
        assert app.screen is run_screen(app)
        await until(pilot, lambda: bool(run_screen(app).query(Compaction)))
        await pilot.pause()
        active = {b.binding.action: b.enabled for b in app.screen.active_bindings.values()}
        assert active.get("summary") is True


async def test_notes_appear_in_the_notes_pane(tmp_path: Path) -> None:
    app = long_run(tmp_path)
    seen: list[Message] = []
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        await finished(pilot)
        notes = run_screen(app).query_one(Notes)
        assert [e.text for e in shown(seen, ev.NoteAdded)] == ["add subtracts: fix calc.py"]
        assert notes.of(None) == ["add subtracts: fix calc.py"]
        text = str(notes.query_one(".notes--text", Static).content)
        assert "add subtracts: fix calc.py" in text
        assert notes.border_title == "notes (1)"


@pytest.mark.slow
async def test_a_repeating_agent_is_warned_in_the_transcript_and_a_toast(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = build(tmp_path, *[{"tool_calls": [READ_CALC]}] * 25, max_steps=25)
    toasts = notifications(app, monkeypatch)
    async with app.run_test(size=SIZE) as pilot:
        await finished(pilot)
        screen = run_screen(app)
        warned = [str(n.content) for n in screen.query(".note.-stall").results(Static)]
        assert screen.outcome == "stalled"
    assert warned == [
        "stall warning at step 5: repeated or idle for 5 steps; told to change approach"
    ]
    assert any("is repeating itself (step 5)" in t for t in toasts)


async def test_a_real_fall_over_is_a_transcript_line_and_a_toast(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The first provider answers 503 past the run's retries: the chain asks the second.
    def model(name: str, *errors: dict[str, Any]) -> ScriptedProvider:
        first = {"text": f"{name} reads", "tool_calls": [READ_CALC], "errors": list(errors)}
        script = parse_scenario({"model": "m", "turns": [first, {"text": f"{name} is done"}]})
        return ScriptedProvider(script, name=name, max_retries=0)

    chain = Fallback([model("primary", {"status": 503}, {"status": 503}), model("backup")])
    app = build(tmp_path, provider=chain, criterion=None, max_retries=1)
    toasts = notifications(app, monkeypatch)
    async with app.run_test(size=SIZE) as pilot:
        await finished(pilot)
        screen = run_screen(app)
        lines = [str(n.content) for n in screen.query(".note.-fallback").results(Static)]
        assert screen.outcome == "finished"
        assert screen.transcript.text_of(1) == "backup reads"
    assert lines == ["fell back at step 1: primary → backup (its retries were spent)"]
    assert any("now uses backup: primary failed" in t for t in toasts)


async def test_a_resumed_run_shows_the_notes_it_kept_before_then_the_new_ones(
    tmp_path: Path,
) -> None:
    # Step 1 keeps a note, step 2's write is deferred: the run pauses.
    first: dict[str, Any] = {
        "tool_calls": [{"name": "note", "arguments": {"text": "the sign in add is wrong"}}]
    }
    turns = [first, {"tool_calls": [FIX_CALC], "usage": USAGE}]
    db = tmp_path / "store.db"
    contract = TaskContract.workspace("fix the adder", calc_project(tmp_path / "p"), NoGate())
    async with Store.open(db) as store:
        paused = await run(
            contract, scripted(*turns), store=store, approver=DeferAll(), sandbox=select("floor")
        )
    assert paused.outcome == "awaiting_approval"
    # Resumed in the app: the write is asked again, then the model keeps a second note.
    second = {"tool_calls": [{"name": "note", "arguments": {"text": "fixed; nothing left"}}]}
    app = make_app(db, resumer=resumer_with(*turns, second, {"text": "Done."}))
    async with app.run_test(size=SIZE) as pilot:
        app.resume_run(paused.run_id)
        await modal(pilot)
        notes = run_screen(app).query_one(Notes)
        await until(pilot, lambda: notes.of(None) == ["the sign in add is wrong"])
        await pilot.press("y")
        await finished(pilot)
        assert notes.of(None) == ["the sign in add is wrong", "fixed; nothing left"]
        assert "the sign in add is wrong" in str(notes.query_one(".notes--text", Static).content)


async def test_a_chosen_agent_shows_its_own_context_and_notes(tmp_path: Path) -> None:
    child = {
        "turns": [
            {
                "tool_calls": [{"name": "note", "arguments": {"text": "calc.py is one function"}}],
                "usage": USAGE,
            },
            {"text": "Seen.", "usage": {"input_tokens": 1_500, "output_tokens": 5}},
        ]
    }
    spawn = {"name": "spawn_agent", "arguments": {"goal": "survey calc", "max_steps": 3}}
    scenario = parse_scenario(
        {
            "model": "tree-model",
            "turns": [
                {"tool_calls": [spawn], "usage": USAGE},
                {"text": "All done.", "usage": USAGE},
            ],
            "agents": {"survey": child},
        }
    )
    contract = TaskContract.workspace("survey", calc_project(tmp_path / "project"))
    tree = Containment(max_total_agents=1, max_concurrent=1, max_depth=1)
    app_run = AppRun(
        NewRun(contract.with_context_window(8_000), tree),
        ScriptedProvider(scenario),
        Policy.permissive(),
        select("floor"),
        label="scripted test model",
    )
    app = make_app(tmp_path / "store.db", app_run, remember_file=tmp_path / "remembered.toml")
    async with app.run_test(size=(140, 40)) as pilot:
        await finished(pilot)
        screen = run_screen(app)
        notes = screen.query_one(Notes)
        meter = screen.query_one("#meter-context", Meter)
        assert (notes.of(None), meter.label, meter.reading) == ([], "context", "900 / 8.0k")
        (agent,) = screen.agent_tree.nodes_by_agent
        screen.agent_tree.focus()
        screen.agent_tree.move_cursor(screen.agent_tree.nodes_by_agent[agent])
        await pilot.press("enter")
        await pilot.pause()
        assert notes.of(agent) == ["calc.py is one function"]
        assert str(notes.query_one(".notes--text", Static).content) == "• calc.py is one function"
        assert meter.label == f"context · agent {agent}"
        assert meter.reading.startswith("1.5k / ")  # the child's last call, not the root's
        await pilot.press("a")  # every agent again: the root's context and notes
        await pilot.pause()
        assert (meter.label, meter.reading) == ("context", "900 / 8.0k")
        assert "none kept yet" in str(notes.query_one(".notes--text", Static).content)


async def test_the_notes_section_shows_what_the_model_is_given_and_counts_the_rest() -> None:
    class NotesApp(App[None]):
        def compose(self) -> ComposeResult:
            yield Notes()

    app = NotesApp()
    async with app.run_test(size=(60, 20)) as pilot:
        notes = app.query_one(Notes)
        for i in range(NOTES_SHOWN + 5):
            notes.add(None, f"note {i}")
        notes.add(3, "a child's note")
        await pilot.pause()
        lines = str(notes.query_one(".notes--text", Static).content).splitlines()
    assert lines[0] == "(5 older notes not shown)"
    assert lines[1:] == [f"• note {i}" for i in range(5, NOTES_SHOWN + 5)]
    assert notes.border_title == f"notes ({NOTES_SHOWN + 5})"

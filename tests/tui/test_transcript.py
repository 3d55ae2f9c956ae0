"""The transcript: streamed text and thinking, tool-call lines that expand, live command output."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest
from textual.app import App, ComposeResult
from textual.widgets import Markdown

from ioh_tui.policy import Policy
from ioh_tui.tui.describe import visible
from ioh_tui.tui.screens.run import RunScreen
from ioh_tui.tui.widgets.agent_text import AgentText
from ioh_tui.tui.widgets.tool_call import ToolCall
from ioh_tui.tui.widgets.transcript import (
    HELD_MAX,
    INLINE_AGENTS,
    KEEP_BLOCKS,
    PRUNE_TO,
    Transcript,
)
from tests.tui.fakes import GatedProvider
from tests.tui.harness import READ_CALC, USAGE, build, finished, run_screen, until


def shows(screen: RunScreen, text: str) -> bool:
    return any(block.source == text for block in screen.query(AgentText))


async def test_text_appears_in_the_transcript_as_it_streams(tmp_path: Path) -> None:
    provider = GatedProvider(["Looking ", "at **calc.py**", " now."])
    app = build(tmp_path, provider=provider, criterion=None)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = run_screen(app)
        shown: list[str] = []
        for expected in ("Looking ", "Looking at **calc.py**", "Looking at **calc.py** now."):
            await until(pilot, lambda: provider.waiting)
            provider.release()
            await until(pilot, partial(shows, screen, expected))
            shown.append(screen.query_one(AgentText).source)
        await finished(pilot)
        assert screen.transcript.text_of(1) == "Looking at **calc.py** now."
    # Each piece was on screen before the next one was even sent.
    assert shown == ["Looking ", "Looking at **calc.py**", "Looking at **calc.py** now."]


async def test_thinking_and_text_are_separate_markdown_blocks(tmp_path: Path) -> None:
    app = build(
        tmp_path,
        {"thinking": "The sign is wrong.", "text": "I will *read* it.", "usage": USAGE},
        criterion=None,
    )
    async with app.run_test(size=(100, 30)) as pilot:
        await finished(pilot)
        blocks = list(run_screen(app).query(AgentText))
    assert [(b.thinking, b.source) for b in blocks] == [
        (True, "The sign is wrong."),
        (False, "I will *read* it."),
    ]
    assert all(isinstance(b, Markdown) and not b.streaming for b in blocks)


async def test_a_tool_call_is_one_line_that_expands_to_arguments_and_output(tmp_path: Path) -> None:
    app = build(
        tmp_path, {"tool_calls": [READ_CALC], "usage": USAGE}, {"text": "ok"}, criterion=None
    )
    async with app.run_test(size=(100, 30)) as pilot:
        await finished(pilot)
        call = run_screen(app).query_one(ToolCall)
        assert (call.line, call.status) == ("read calc.py", "ok")
        # Collapsed, a call is its line alone: the details are mounted when first opened.
        assert not call.expanded and not call.query(".tool-call--output")
        await pilot.click(ToolCall)
        await pilot.pause()
        output = call.query_one(".tool-call--output")
        assert (call.expanded, output.display) == (True, True)
        assert "return a - b" in str(output.render())
        assert '"path": "calc.py"' in str(call.query_one(".tool-call--arguments").render())
        call.focus()
        await pilot.press("enter")
        assert (call.expanded, output.display) == (False, False)


async def test_a_running_command_shows_a_tail_of_its_output(tmp_path: Path) -> None:
    script = (
        "import time; print('collecting tests', flush=True); time.sleep(1.5); print('all passed')"
    )
    run = {"name": "exec", "arguments": {"argv": ["python3", "-B", "-c", script]}}
    policy = Policy.default().layer("tests").allow_exec("python3", "python3 *")
    app = build(
        tmp_path,
        {"tool_calls": [run], "usage": USAGE},
        {"text": "ok"},
        policy=policy,
        criterion=None,
    )
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: bool(run_screen(app).query(ToolCall)))
        call = run_screen(app).query_one(ToolCall)
        await until(pilot, lambda: "collecting tests" in call.live)
        await until(pilot, lambda: bool(call.query(".tool-call--tail")))  # mounted on its own
        tail = call.query_one(".tool-call--tail")
        assert (call.status, tail.display) == ("running", True)
        assert "collecting tests" in str(tail.render())
        await finished(pilot)
        assert (call.status, tail.display) == ("ok", False)
        assert "all passed" in call.output


class TranscriptApp(App[None]):
    """The transcript alone."""

    def compose(self) -> ComposeResult:
        yield Transcript(id="transcript")


async def test_a_long_transcript_prunes_its_oldest_finished_blocks() -> None:
    app = TranscriptApp()
    async with app.run_test(size=(80, 24)) as pilot:
        transcript = app.query_one(Transcript)
        running = await transcript.add_call("c0", "exec", {"argv": ["make"]}, None)
        for i in range(KEEP_BLOCKS):
            await transcript.note(f"note {i}", agent=i % 3)
        await transcript.flush()  # blocks are mounted in batches; this is the batch
        await pilot.pause()
        shown = [str(w.render()) for w in transcript.children]
        pruned = KEEP_BLOCKS + 1 - PRUNE_TO
        assert transcript.pruned == pruned
        assert len(transcript.children) == PRUNE_TO + 1  # and the note saying so
        assert shown[0].startswith(f"{pruned} earlier blocks are not shown here")
        # The running call stays however old it is; the newest notes stay.
        assert running in transcript.children and transcript.call("c0") is running
        assert shown[-1] == f"note {KEEP_BLOCKS - 1}"
        assert "note 0" not in shown
        # Filtering keeps the note in view.
        transcript.show_only(1)
        assert transcript.children[0].display


async def test_past_a_few_sub_agents_their_steps_wait_until_their_agent_is_selected() -> None:
    app = TranscriptApp()
    async with app.run_test(size=(80, 24)) as pilot:
        transcript = app.query_one(Transcript)
        await transcript.start_step(1)
        for agent in range(1, INLINE_AGENTS + 2):
            await transcript.start_step(1, agent, f"agent {agent}")
            await transcript.append(1, f"agent {agent} says hi", thinking=False, agent=agent)
        last = INLINE_AGENTS + 1
        await transcript.append(1, " and more", thinking=False, agent=last)  # held: still taken
        call = await transcript.add_call("c1", "read_file", {"path": "a.py"}, last)
        await transcript.flush()
        await pilot.pause()
        mounted = [w for w in transcript.children if w.has_class(f"-of-{last}")]
        shown = " ".join(str(w.render()) for w in transcript.children if w.display)
        # The agent past the limit is not mounted; the earlier ones are, but hidden now.
        assert transcript.inline is False and mounted == [] and not call.is_mounted
        assert f"More than {INLINE_AGENTS} sub-agents" in shown
        assert [w.display for w in transcript.children if w.has_class("-of-1")] == [False, False]
        # Its call still takes events while held, and counts among the calls.
        call.add_output("line 1\n")
        assert transcript.call("c1", last) is call and call in transcript.calls

        transcript.show_only(last)
        await until(pilot, lambda: call.is_mounted)
        said = f"**[agent {last}]** agent {last} says hi and more"
        await until(pilot, lambda: texts_of(transcript, last) == [said])
        shown_blocks = [w for w in transcript.children if w.display]
        assert shown_blocks and all(w.has_class(f"-of-{last}") for w in shown_blocks)
        assert call.query(".tool-call--tail")  # the output that came while held
        # Another agent's steps come in while one is selected: held, not mounted.
        await transcript.note("late", agent=2)
        await transcript.flush()
        assert not any(str(w.render()) == "late" for w in transcript.children)
        # The every-agent view shows the root's blocks and notes only.
        transcript.show_only(None)
        assert all(w.has_class("-of-root") for w in transcript.children if w.display), (
            "only the root's blocks show"
        )
        transcript.show_only(2)
        await until(pilot, lambda: any(str(w.render()) == "late" for w in transcript.children))


def texts_of(transcript: Transcript, agent: int) -> list[str]:
    return [b.source for b in transcript.query(AgentText) if b.agent == agent]


async def test_a_held_agent_keeps_only_its_newest_blocks() -> None:
    app = TranscriptApp()
    async with app.run_test(size=(80, 24)) as pilot:
        transcript = app.query_one(Transcript)
        for agent in range(1, INLINE_AGENTS + 2):
            await transcript.note("hello", agent=agent)
        busy = INLINE_AGENTS + 1
        for i in range(KEEP_BLOCKS):
            await transcript.note(f"note {i}", agent=busy)
        assert transcript.pruned == KEEP_BLOCKS + 1 - PRUNE_TO
        transcript.show_only(busy)
        await transcript.flush()
        await pilot.pause()
        texts = [str(w.render()) for w in transcript.children if w.has_class(f"-of-{busy}")]
    assert len(texts) == PRUNE_TO and texts[-1] == f"note {KEEP_BLOCKS - 1}"


async def test_held_blocks_across_many_agents_stay_bounded() -> None:
    app = TranscriptApp()
    async with app.run_test(size=(80, 24)):
        transcript = app.query_one(Transcript)
        per_agent = KEEP_BLOCKS // 2  # under the per-agent limit: only the total trims
        agents = range(1, INLINE_AGENTS + HELD_MAX // per_agent + 3)
        for agent in agents:
            for i in range(per_agent):
                await transcript.note(f"{agent}.{i}", agent=agent)
        held = {agent: len(transcript._held[agent]) for agent in agents[INLINE_AGENTS:]}
        total = sum(held.values())
        assert total <= HELD_MAX and transcript.pruned == len(held) * per_agent - total > 0
        # The newest agent keeps all it said; trimming took from those holding the most.
        assert held[agents[-1]] == per_agent
        assert all(count >= per_agent * 3 // 4 - 1 for count in held.values())


@pytest.mark.parametrize(
    ("summary", "shown"),
    [
        ("[read calc.py] (2 lines)", "(2 lines)"),
        ("[exec `make test` exit 1]", "exit 1"),
        (
            '[child "child task 0" -> finished, 4 steps, 2,160 tokens]',
            "finished, 4 steps, 2,160 tokens",
        ),
        ("no tag at all", "no tag at all"),
    ],
)
def test_a_finished_call_adds_only_what_its_line_does_not_say(summary: str, shown: str) -> None:
    call = ToolCall(call_id="c1", name="spawn_agent", arguments={}, line="spawn agent: x")
    call.finish(ok=True, refused=False, summary=summary, output="")
    assert (call.summary, call.status) == (shown, "ok")


def test_an_attached_images_name_cannot_drive_the_terminal() -> None:
    call = ToolCall(call_id="c1", name="view_image", arguments={}, line="view image")
    name = "evil\x1b]0;pwned\x07.png"
    output = f"[view_image {name}] shown to you as {name} (image/png, 70 bytes, 3x2)"
    call.finish(ok=True, refused=False, summary="", output=output)
    (line,) = call.images
    assert "\x1b" not in line and "\x07" not in line
    assert line == visible(f"▣ image {name}: 70 bytes, 3x2 (image/png)")[0]


async def test_a_big_trees_running_spawn_lines_are_pruned_like_finished_ones() -> None:
    app = TranscriptApp()
    async with app.run_test(size=(80, 24)) as pilot:
        transcript = app.query_one(Transcript)
        spawn = await transcript.add_call("s0", "spawn_agent", {"goal": "survey"}, None)
        command = await transcript.add_call("e0", "exec", {"argv": ["make"]}, None)
        for agent in range(1, INLINE_AGENTS + 2):
            await transcript.note("hello", agent=agent)
        assert not transcript.inline
        for i in range(KEEP_BLOCKS):
            await transcript.note(f"note {i}")
        await transcript.flush()
        await pilot.pause()
        # Both still run; the child's line goes (the tree shows the child), the command's stays.
        assert (spawn.status, command.status) == ("running", "running")
        assert transcript.call("s0") is None and spawn not in transcript.children
        assert transcript.call("e0") is command and command in transcript.children

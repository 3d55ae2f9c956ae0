"""The transcript: streamed text and thinking, tool-call lines that expand, live command output."""

from __future__ import annotations

from functools import partial
from pathlib import Path

from textual.app import App, ComposeResult
from textual.widgets import Markdown

from ioh_tui.policy import Policy
from ioh_tui.tui.screens.run import RunScreen
from ioh_tui.tui.widgets.agent_text import AgentText
from ioh_tui.tui.widgets.tool_call import ToolCall
from ioh_tui.tui.widgets.transcript import KEEP_BLOCKS, PRUNE_TO, Transcript
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

"""Streaming at speed: the engine's pieces reach the screen joined, and long replies draw as before.

The forwarder joins a stream's pieces before they become Textual messages (one a piece cost more
than the engine's whole step), and a reply's paragraphs are drawn in `Prose` blocks rather than
one widget a paragraph: both must change nothing a person sees.
"""

from __future__ import annotations

import asyncio
import html
import re

import pytest
from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.screen import Screen

from ioh_tui.core import events as ev
from ioh_tui.tui.bridge import STREAM_S, EventForwarder
from ioh_tui.tui.messages import EngineEventMessage
from ioh_tui.tui.styles import stylesheet
from ioh_tui.tui.widgets.agent_text import PROSE_CHARS, AgentText, Prose


class Recorder(Screen[None]):
    """Keeps every engine event it is sent, in order."""

    def __init__(self) -> None:
        super().__init__()
        self.events: list[ev.Event] = []

    def on_engine_event_message(self, message: EngineEventMessage) -> None:
        self.events.append(message.event)


class RecorderApp(App[None]):
    def on_mount(self) -> None:
        self.push_screen(Recorder())


async def test_a_streams_pieces_reach_the_screen_joined_and_in_the_engines_order() -> None:
    app = RecorderApp()
    async with app.run_test() as pilot:
        screen = app.screen
        assert isinstance(screen, Recorder)
        forward = EventForwarder(screen)
        forward(ev.StepStarted(run_id=1, step=1))
        for piece in ("Look", "ing ", "at it"):
            forward(ev.TextDelta(run_id=1, step=1, text=piece))
        forward(ev.ThinkingDelta(run_id=1, step=1, text="hm"))
        forward(ev.TextDelta(run_id=1, agent_id=7, parent_id=1, step=1, text="child"))
        forward(ev.TextDelta(run_id=1, step=1, text=" now."))
        forward(ev.StepFinished(run_id=1, step=1, tokens=1, total_tokens=1, tool_calls=0))
        await pilot.pause()
        # Any other event posts what is held first, one delta a stream.
        assert screen.events == [
            ev.StepStarted(run_id=1, step=1),
            ev.TextDelta(run_id=1, step=1, text="Looking at it now."),
            ev.ThinkingDelta(run_id=1, step=1, text="hm"),
            ev.TextDelta(run_id=1, agent_id=7, parent_id=1, step=1, text="child"),
            ev.StepFinished(run_id=1, step=1, tokens=1, total_tokens=1, tool_calls=0),
        ]
        # With nothing after them, pieces are posted within STREAM_S.
        forward(ev.TextDelta(run_id=1, step=2, text="more"))
        await asyncio.sleep(STREAM_S * 2)
        await pilot.pause()
        assert screen.events[-1] == ev.TextDelta(run_id=1, step=2, text="more")


PARAGRAPH = (
    "The sign in `add` is **wrong**: it *subtracts*, so every test that adds two numbers fails,"
    " and the fix is one character. "
)
REPLY = (
    "\n\n".join(PARAGRAPH * (1 + i % 3) for i in range(12))
    + "\n\nWhat changed\n============\n\n- the operator\n- a test\n\n"
    + "```python\nreturn a + b\n```\n\n"
    + "\n\n".join(PARAGRAPH * (1 + i % 2) for i in range(10))
)
THINKING = "\n\n".join(PARAGRAPH for _ in range(3))


class Reply(App[None]):
    """A reply and its thinking, in the run view's stylesheet."""

    CSS_PATH = stylesheet("run")

    def __init__(self) -> None:
        super().__init__()
        self.text = AgentText(step=1)
        self.thinking = AgentText(step=1, thinking=True)

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield self.thinking
            yield self.text


@pytest.mark.slow
async def test_a_long_streamed_reply_draws_the_lines_textuals_markdown_draws() -> None:
    """Streamed in pieces, the reply goes into `Prose` blocks; whole, into Textual's blocks."""
    assert len(REPLY) > 2 * PROSE_CHARS  # several Prose blocks, then Textual's own blocks
    size = (90, 150)
    drawn = Reply()  # Textual's Markdown, the whole document at once
    async with drawn.run_test(size=size) as pilot:
        await drawn.text.update(REPLY)
        await drawn.thinking.update(THINKING)
        await pilot.pause()
        expected = drawn.export_screenshot()
    streamed = Reply()
    async with streamed.run_test(size=size) as pilot:
        for block, source in ((streamed.thinking, THINKING), (streamed.text, REPLY)):
            for start in range(0, len(source), 23):  # pieces that split words, marks and lines
                await block.write(source[start : start + 23])
                if start % (23 * 9) == 0:
                    await block.flush()  # appends land mid-paragraph, mid-list, mid-heading
                    await pilot.pause()
            await block.close()
        await pilot.pause()
        assert len(streamed.text.query(Prose)) >= 3
        assert streamed.text.source == REPLY
        assert rows(streamed.export_screenshot()) == rows(expected)


def rows(svg: str) -> list[list[tuple[float, str, str]]]:
    """A screenshot's text, row by row: each run's column, text and style (its SVG class)."""
    found: dict[float, list[tuple[float, str, str]]] = {}
    for m in re.finditer(
        r'<text class="[^"]*?-(r\d+)" x="([\d.]+)" y="([\d.]+)"[^>]*>(.*?)</text>', svg
    ):
        style, x, y, text = m.group(1), float(m.group(2)), float(m.group(3)), m.group(4)
        found.setdefault(y, []).append((x, html.unescape(text), style))
    assert found, "no text in the screenshot"
    return [sorted(runs) for _, runs in sorted(found.items())]

"""Streaming at speed: the engine's pieces reach the screen joined, and long replies draw as before.

The forwarder joins a stream's pieces before they become Textual messages (one a piece cost more
than the engine's whole step), and a reply's paragraphs are drawn by `Prose` blocks through the
line API rather than one widget a paragraph: none of it may change what a person sees, and text
that fills a line already there must not cost the screen a layout pass.
"""

from __future__ import annotations

import asyncio
import html
import re
from typing import Any

import pytest
from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.geometry import Offset
from textual.pilot import Pilot
from textual.screen import Screen
from textual.selection import Selection

from ioh_tui.core import events as ev
from ioh_tui.policy import Act, ApprovalRequest
from ioh_tui.tui.bridge import BATCH_S, EventForwarder, TuiApprover
from ioh_tui.tui.messages import ApprovalNeeded, EngineEventMessage
from ioh_tui.tui.styles import stylesheet
from ioh_tui.tui.widgets.agent_text import AgentText
from ioh_tui.tui.widgets.prose import Prose
from tests.tui.harness import until


class Recorder(Screen[None]):
    """Keeps every engine event it is sent, in order."""

    def __init__(self) -> None:
        super().__init__()
        self.events: list[ev.Event] = []
        self.messages = 0
        self.asked: list[tuple[int, ApprovalNeeded]] = []
        """Each ask, with how many events had come before it."""

    def on_engine_event_message(self, message: EngineEventMessage) -> None:
        self.events.extend(message.events)
        self.messages += 1

    def on_approval_needed(self, message: ApprovalNeeded) -> None:
        self.asked.append((len(self.events), message))


class RecorderApp(App[None]):
    def on_mount(self) -> None:
        self.push_screen(Recorder())


async def test_events_reach_the_screen_in_one_message_joined_and_in_the_engines_order() -> None:
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
        forward(ev.TextDelta(run_id=1, step=1, text="after"))
        await until(pilot, lambda: len(screen.events) == 6)
        # One message for all of them (one an event kept the screen from drawing); one delta a
        # stream until another event comes, which the pieces after it follow.
        assert screen.messages == 1
        assert screen.events == [
            ev.StepStarted(run_id=1, step=1),
            ev.TextDelta(run_id=1, step=1, text="Looking at it now."),
            ev.ThinkingDelta(run_id=1, step=1, text="hm"),
            ev.TextDelta(run_id=1, agent_id=7, parent_id=1, step=1, text="child"),
            ev.StepFinished(run_id=1, step=1, tokens=1, total_tokens=1, tool_calls=0),
            ev.TextDelta(run_id=1, step=1, text="after"),
        ]
        # Held for BATCH_S, then posted.
        held = asyncio.get_running_loop().time()
        forward(ev.TextDelta(run_id=1, step=2, text="more"))
        await until(pilot, lambda: screen.events[-1] == ev.TextDelta(run_id=1, step=2, text="more"))
        assert asyncio.get_running_loop().time() - held >= BATCH_S
        assert screen.messages == 2


async def test_an_ask_and_the_runs_end_are_not_held_behind_the_batch() -> None:
    app = RecorderApp()
    async with app.run_test() as pilot:
        screen = app.screen
        assert isinstance(screen, Recorder)
        forward = EventForwarder(screen)
        approver = TuiApprover(screen, forward)
        asked = ev.ApprovalRequested(
            run_id=1, step=1, request_id=1, act="exec", target="make", rule=None, layer=None
        )
        forward(asked)
        decision = asyncio.ensure_future(approver.decide(ApprovalRequest(Act.EXEC, "make")))
        await until(pilot, lambda: bool(screen.asked))
        # The ask comes after the event that announced it, never before.
        assert screen.asked[0][0] == 1 and screen.events == [asked]
        decision.cancel()
        loop = asyncio.get_running_loop()
        ended = loop.time()
        forward(ev.RunFinished(run_id=1, outcome="success", steps=1, tokens=1))
        await until(pilot, lambda: len(screen.events) == 2)
        assert loop.time() - ended < BATCH_S  # posted at once, not at the batch's end


PARAGRAPH = (
    "The sign in `add` is **wrong**: it *subtracts*, so every test that adds two numbers fails,"
    " and the fix is one character. "
)
REPLY = (
    "\n\n".join(PARAGRAPH * (1 + i % 3) for i in range(12))
    + "\n\nWhat changed\n============\n\n- the operator\n- a test\n\n"
    + "```python\nreturn a + b\n```\n\n"
    + "\n\n".join(PARAGRAPH * (1 + i % 2) for i in range(10))
    + "\n\n1. first, *read* it\n2. then `fix` it\n\n"
    + "```\nline one\n\nline three, after a blank line\n```\n\n"
    + "> quoted, **strong**\n\n---\n\nThe last paragraph,  \nwith a hard break."
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


async def drawn_whole(
    size: tuple[int, int], reply: str = REPLY, thinking: str = THINKING
) -> list[Row]:
    """The screen's rows with the reply and its thinking given to Textual's Markdown at once."""
    drawn = Reply()
    async with drawn.run_test(size=size) as pilot:
        await drawn.text.update(reply)
        await drawn.thinking.update(thinking)
        await pilot.pause()
        return rows(drawn.export_screenshot())


async def stream(app: Reply, pilot: Pilot[None], reply: str = REPLY) -> None:
    """Stream the thinking, then the reply, in pieces that split words, marks and lines."""
    for block, source in ((app.thinking, THINKING), (app.text, reply)):
        for start in range(0, len(source), 23):
            await block.write(source[start : start + 23])
            if start % (23 * 9) == 0:
                await block.flush()  # appends land mid-paragraph, mid-list, mid-heading
                await pilot.pause()
        await block.close()
    await pilot.pause()


@pytest.mark.slow
async def test_a_long_streamed_reply_draws_the_lines_textuals_markdown_draws() -> None:
    """Streamed in pieces, the reply's paragraphs go into `Prose` blocks; whole, Textual's own."""
    size = (90, 170)
    expected = await drawn_whole(size)
    streamed = Reply()
    async with streamed.run_test(size=size) as pilot:
        await stream(streamed, pilot)
        # The paragraphs before the heading, after the first fence, and the last one.
        assert len(streamed.text.query(Prose)) == 3
        assert streamed.text.source == REPLY
        assert rows(streamed.export_screenshot()) == expected


async def test_a_narrower_screen_wraps_the_streamed_reply_again() -> None:
    """Streamed at one width and shown at another, the lines are those drawn at the new width."""
    reply = REPLY[: REPLY.index("What changed")]
    expected = await drawn_whole((60, 120), reply)
    streamed = Reply()
    async with streamed.run_test(size=(100, 120)) as pilot:
        await stream(streamed, pilot, reply)
        wide = rows(streamed.export_screenshot())
        await pilot.resize_terminal(60, 120)
        await pilot.pause()
        assert rows(streamed.export_screenshot()) == expected != wide


async def test_text_that_fills_a_line_already_there_lays_nothing_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Pieces streamed into the last paragraph repaint its lines; only a new line needs a layout.

    Textual lays the screen out again whenever a widget's size may have changed: a `Static` that
    took each piece (as `Prose` was) cost one layout pass a piece, which walks every widget.
    """
    passes: list[Screen[None]] = []
    layout = Screen._refresh_layout

    def counted(screen: Screen[None], *args: Any, **kwargs: Any) -> None:
        passes.append(screen)
        layout(screen, *args, **kwargs)

    app = Reply()
    async with app.run_test(size=(80, 40)) as pilot:
        start = "\n\n".join(PARAGRAPH for _ in range(4)) + "\n\nThe last"
        await app.text.write(start)
        await app.text.flush()
        await until(pilot, lambda: any(p.plain.endswith("The last") for p in app.text.query(Prose)))
        await pilot.pause()  # and laid out
        prose = app.text.query_one(Prose)
        height = prose.size.height
        monkeypatch.setattr(Screen, "_refresh_layout", counted)
        pieces = [" word"] * 24  # 120 characters: two new lines at this width, at most
        for piece in pieces:
            await app.text.write(piece)
            await app.text.flush()
            await pilot.pause()
        await until(pilot, lambda: prose.plain.endswith("".join(pieces)))
        await pilot.pause()
        grown = prose.size.height - height
        assert 1 <= grown <= 2
        assert len(passes) <= grown + 1  # one a new line (and one for good measure), not a piece
        await app.text.close()
        await pilot.pause()
        drawn = rows(app.export_screenshot())
    assert drawn == await drawn_whole((80, 40), start + "".join(pieces), thinking="")


async def test_selecting_across_paragraphs_copies_the_text_drawn() -> None:
    """A selection's offsets count the paragraphs' lines joined, as one `Static` holding them."""
    app = Reply()
    async with app.run_test(size=(60, 40)) as pilot:
        await app.text.write("First *one*.\n\nSecond, `two`  \nand on.\n\nThird.")
        await app.text.close()
        await pilot.pause()
        prose = app.text.query_one(Prose)
        plain = prose.render_line(0)
        # Lines of the joined text: 0 "First one.", 1 blank, 2 "Second, two", 3 "and on.".
        app.screen.selections = {prose: Selection(Offset(6, 0), Offset(3, 3))}
        await pilot.pause()
        assert app.screen.get_selected_text() == "one.\n\nSecond, two\nand"
        selected = prose.render_line(0)
        assert selected.text == plain.text == "First one."
        styles = [{s.style for s in strip if "one" in s.text} for strip in (plain, selected)]
        assert styles[0] != styles[1]  # "one." is drawn selected


Row = list[tuple[float, str, str]]


def rows(svg: str) -> list[Row]:
    """A screenshot's text, row by row: each run's column, text and style (its SVG class)."""
    found: dict[float, list[tuple[float, str, str]]] = {}
    for m in re.finditer(
        r'<text class="[^"]*?-(r\d+)" x="([\d.]+)" y="([\d.]+)"[^>]*>(.*?)</text>', svg
    ):
        style, x, y, text = m.group(1), float(m.group(2)), float(m.group(3)), m.group(4)
        found.setdefault(y, []).append((x, html.unescape(text), style))
    assert found, "no text in the screenshot"
    return [sorted(runs) for _, runs in sorted(found.items())]

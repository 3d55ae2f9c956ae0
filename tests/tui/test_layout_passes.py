"""What a busy run costs the screen in layout passes (each walks and renders every widget).

Keys wait behind layout passes: with a 100-agent run on screen each costs 20-40 ms on a 2-core
machine (benchmarks/bench_tui_tree.py). A transcript block is laid out once when it is mounted,
a tool call that finishes keeps its one row, and a new agent in the tree redraws the pane
without laying out the screen, its scrollbar following. Frames that wait do not overlap.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from textual.app import App, ComposeResult
from textual.pilot import Pilot
from textual.screen import Screen

from ioh_tui.core import events as ev
from ioh_tui.tui.styles import stylesheet
from ioh_tui.tui.widgets.agent_tree import AgentTree
from ioh_tui.tui.widgets.transcript import Transcript
from tests.tui.harness import USAGE, build, finished, run_screen, until

LONG_PATH = "src/package/with/a/rather/deep/module/path/that/goes/on.py"


class Panes(App[None]):
    """A transcript beside a tree pane, in the run view's stylesheet."""

    CSS_PATH = stylesheet("run")
    CSS = "Screen { layout: horizontal; } #agent-tree { display: block; }"

    def compose(self) -> ComposeResult:
        yield Transcript(id="transcript")
        yield AgentTree(id="agent-tree")


@contextmanager
def layouts(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Screen[Any]]]:
    """The layout passes of the screen while the block runs."""
    passes: list[Screen[Any]] = []
    layout = Screen._refresh_layout

    def counted(screen: Screen[Any], *args: Any, **kwargs: Any) -> None:
        passes.append(screen)
        layout(screen, *args, **kwargs)

    with monkeypatch.context() as patched:
        patched.setattr(Screen, "_refresh_layout", counted)
        yield passes


async def settle(pilot: Pilot[None]) -> None:
    """Let every pass and redraw asked for run (a pass may ask for another)."""
    for _ in range(4):
        await pilot.pause(0.05)


async def test_blocks_mounted_together_cost_one_layout_pass(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Textual asks for a second pass when the first sets each new widget's virtual size."""
    app = Panes()
    async with app.run_test(size=(100, 30)) as pilot:
        transcript = app.query_one(Transcript)
        await transcript.note("first")
        await transcript.flush()
        await settle(pilot)
        with layouts(monkeypatch) as passes:
            await transcript.start_step(2)
            await transcript.note("a note")
            await transcript.add_call("c1", "read_file", {"path": "a.py"}, None)
            await transcript.flush()
            await until(pilot, lambda: len(transcript.children) == 4)
            await settle(pilot)
        assert len(passes) == 1


async def test_a_finished_call_keeps_its_one_row_and_its_summary(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    app = Panes()
    async with app.run_test(size=(80, 30)) as pilot:
        transcript = app.query_one(Transcript)
        call = await transcript.add_call("c1", "read_file", {"path": LONG_PATH}, None)
        await transcript.flush()
        await until(pilot, lambda: call.is_mounted and call.size.width > 0)
        await settle(pilot)
        assert call.size.height == 1
        with layouts(monkeypatch) as passes:
            call.finish(ok=True, refused=False, summary="[read on.py] (1,204 lines)", output="x")
            await settle(pilot)
        assert passes == []
        assert call.size.height == 1
        drawn = str(call.render())
        width = call.content_size.width
        assert len(drawn) == width and drawn.startswith("✓ read src/package")
        # The line gave way, not the summary.
        assert "…" in drawn and drawn.endswith("(1,204 lines)")


async def test_a_call_with_output_keeps_its_line_one_row() -> None:
    app = Panes()
    async with app.run_test(size=(80, 30)) as pilot:
        transcript = app.query_one(Transcript)
        call = await transcript.add_call(
            "c1", "exec", {"argv": ["make", LONG_PATH, LONG_PATH]}, None
        )
        await transcript.flush()
        await until(pilot, lambda: call.is_mounted)
        call.add_output("collecting 3 tests\ntest_add ...\n")
        await settle(pilot)
        line, tail = call.children[0], call.query_one(".tool-call--tail")
        assert line.size.height == 1 and tail.region.y == line.region.y + 1
        assert str(line.render()).endswith("…")


async def test_a_new_agent_redraws_the_tree_without_a_layout_and_its_scrollbar_follows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    app = Panes()
    async with app.run_test(size=(100, 20)) as pilot:
        tree = app.query_one(AgentTree)
        for agent in range(40):
            tree.root.add_leaf(f"agent {agent}", data=agent)
        await settle(pilot)
        assert tree.show_vertical_scrollbar  # its appearance is a layout pass of its own
        with layouts(monkeypatch) as passes:
            for agent in range(40, 60):
                tree.root.add_leaf(f"agent {agent}", data=agent)
            await settle(pilot)
        assert passes == []
        lines = 61  # the root and sixty agents
        assert tree.virtual_size.height == lines
        assert tree.vertical_scrollbar.window_virtual_size == lines
        tree.scroll_end(animate=False, immediate=True)
        await pilot.pause()
        assert tree.scroll_y == lines - tree.scrollable_content_region.height


async def test_a_frame_that_waits_is_not_overtaken_by_the_next(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A frame's mounts can wait longer than a frame's period; the next one waits its turn.

    Two frames at once would show a later event (a call's finish) before an earlier one (its
    start) that the first frame had not reached yet.
    """
    app = build(tmp_path, {"text": "ok", "usage": USAGE}, criterion=None)
    async with app.run_test(size=(100, 30)) as pilot:
        await finished(pilot)
        screen = run_screen(app)
        shown: list[ev.Event] = []
        gate = asyncio.Event()

        async def show(event: ev.Event) -> None:
            shown.append(event)

        async def mount_slowly() -> None:
            await gate.wait()

        monkeypatch.setattr(screen, "_show_event", show)
        monkeypatch.setattr(screen.transcript, "flush", mount_slowly)
        first, second = (ev.NoteAdded(run_id=1, step=1, text=text) for text in ("first", "second"))
        screen._inbox.append(first)
        one = asyncio.ensure_future(screen.frame())
        await pilot.pause()
        screen._inbox.append(second)
        two = asyncio.ensure_future(screen.frame())
        await pilot.pause(0.05)
        assert shown == [first]  # the second frame waits for the first one's mounts
        gate.set()
        await asyncio.gather(one, two)
        assert shown == [first, second]

"""SVG snapshots of the fleet views: the sub-agent tree, the decision queue, the budget offer."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Input

from ioh_tui.tui.app import IohApp
from ioh_tui.tui.screens.batch import BatchModal
from ioh_tui.tui.screens.budget import BudgetModal
from ioh_tui.tui.screens.queue import DecisionQueueScreen
from tests.snapshots.apps.fleet import tree_app, writers_app
from tests.tui.harness import READ_CALC, USAGE, build, finished, modal, run_screen, until

SnapCompare = Callable[..., bool]
WIDE = (140, 36)

pytestmark = pytest.mark.snapshot


async def tree_settled(pilot: Pilot[Any], children: int = 3) -> None:
    """The tree ran to its end and the pane drew its last batch of labels."""
    app = pilot.app
    assert isinstance(app, IohApp)
    await finished(pilot)
    tree = run_screen(app).agent_tree
    await until(pilot, lambda: len(tree.nodes_by_agent) == children and not tree._dirty)
    await pilot.pause(0.3)
    # The transcript's length below the fold differs by a line between runs (when the last
    # Markdown flush lands), which moves its scrollbar thumb; the picture is of the tree, so show
    # the transcript from the top without a scrollbar.
    transcript = run_screen(app).transcript
    transcript.styles.scrollbar_size_vertical = 0
    transcript.anchor(False)
    await pilot.pause(0.2)  # released on the next layout: short content then reads from the top
    transcript.scroll_home(animate=False)
    await pilot.pause()


async def queue_marked(pilot: Pilot[Any]) -> None:
    """Three children wait on writes; the queue is open and the similar ones are marked."""
    app = pilot.app
    assert isinstance(app, IohApp)
    await modal(pilot)
    await until(pilot, lambda: len(run_screen(app).desk.asks) == 3)
    await pilot.press("w")
    await until(pilot, lambda: isinstance(app.screen, DecisionQueueScreen))
    await pilot.pause()
    await pilot.press("s")
    await pilot.pause()


class TestAgentTree:
    def test_a_finished_tree(self, snap_compare: SnapCompare, tmp_path: Path) -> None:
        """You should see the tree pane between the transcript and the meters: the root line
        with the tree ledger (tokens against the 100k ceiling, 3 done, 0 queued), and three
        children `✓ done` with their goals `child task 0..2` and their spend `2 st · 1.9k tok`;
        the transcript labels the children's steps and calls `agent N`."""
        app = tree_app(tmp_path, 3, max_concurrent=1)
        assert snap_compare(app, terminal_size=WIDE, run_before=tree_settled)


async def larger_tree_one_child_chosen(pilot: Pilot[Any]) -> None:
    """Six children ran; the last one is chosen in the tree."""
    await tree_settled(pilot, 6)
    app = pilot.app
    assert isinstance(app, IohApp)
    screen = run_screen(app)
    tree = screen.agent_tree
    tree.focus()
    tree.move_cursor(tree.nodes_by_agent[max(tree.nodes_by_agent)])
    await pilot.press("enter")
    await until(pilot, lambda: bool(screen.transcript.query(f".-of-{max(tree.nodes_by_agent)}")))
    await pilot.pause(0.3)
    # Whether the view was still following the end when the agent was chosen depends on timing;
    # the picture is of the agent's own lines, read from the top.
    screen.transcript.anchor(False)
    await pilot.pause(0.2)
    screen.transcript.scroll_home(animate=False)
    await pilot.pause()


def larger_tree_picture(
    snap_compare: SnapCompare, tmp_path: Path, run_before: Callable[[Pilot[Any]], Any]
) -> bool:
    """The six-child tree's picture.

    Once taken up to three times: the transcript sometimes sat anchored over content that no
    longer filled it, under blank lines. `Transcript.watch_virtual_size` lets go of the anchor
    once everything fits, so one take is the picture.
    """
    return bool(
        snap_compare(
            tree_app(tmp_path, 6, max_concurrent=1), terminal_size=WIDE, run_before=run_before
        )
    )


class TestLargerTree:
    def test_every_agent_view_keeps_the_roots_steps(
        self, snap_compare: SnapCompare, tmp_path: Path
    ) -> None:
        """You should see six children `✓ done` in the tree and, in the transcript, the root's
        six `spawn agent: child task N` lines with their outcomes and the note `More than 4
        sub-agents: this view keeps the root's steps; select an agent in the tree to read its
        own` (the children's own steps are not shown)."""

        async def settled(pilot: Pilot[Any]) -> None:
            await tree_settled(pilot, 6)

        assert larger_tree_picture(snap_compare, tmp_path, settled)

    def test_a_chosen_child_shows_its_own_steps(
        self, snap_compare: SnapCompare, tmp_path: Path
    ) -> None:
        """You should see agent 7 highlighted in the tree, and the transcript holding only its
        lines, read from the top: `agent 7 spawned: child task 5`, `step 1 · agent 7` with
        `[agent 7] Reading.` and its `read calc.py` call, `step 2 · agent 7` with `[agent 7] It
        subtracts.`, then `agent 7 finished: finished`."""
        assert larger_tree_picture(snap_compare, tmp_path, larger_tree_one_child_chosen)


class TestDecisionQueue:
    def test_similar_requests_marked(self, snap_compare: SnapCompare, tmp_path: Path) -> None:
        """You should see `Decisions waiting on you`: three `waiting` rows, one per child
        (`write notes/child0.md` … `child2.md`, why: default tier), each marked `✓`, and the
        hint offering to approve the 3 similar requests under `write allow notes/*`."""
        app = writers_app(tmp_path, 3, stagger_ms=300)
        assert snap_compare(app, terminal_size=WIDE, run_before=queue_marked)

    def test_one_rule_for_the_marked(self, snap_compare: SnapCompare, tmp_path: Path) -> None:
        """You should see the batch dialog over the queue: `Approve 3 similar requests and
        remember a rule`, the pattern field holding `notes/*`, `approves 3 of 3; keeps
        write allow notes/* for this run`, and the three requests listed by agent."""

        async def batch(pilot: Pilot[Any]) -> None:
            await queue_marked(pilot)
            await pilot.press("A")
            await until(pilot, lambda: isinstance(pilot.app.screen, BatchModal))
            await pilot.pause()
            pilot.app.screen.query_one("#batch-input", Input).cursor_blink = False

        app = writers_app(tmp_path, 3, stagger_ms=300)
        assert snap_compare(app, terminal_size=WIDE, run_before=batch)


class TestBudgetOffer:
    def test_steps_nearly_spent(self, snap_compare: SnapCompare, tmp_path: Path) -> None:
        """You should see the run view with `steps 2 / 2` and, over it, the budget offer:
        `Budget nearly spent: 2 of 2 steps` and the answers `r raise the limit… · s stop the run
        now · f let it finish`."""
        read = {"tool_calls": [READ_CALC], "usage": USAGE}
        app = build(tmp_path, read, {**read, "delay_ms": 60_000}, max_steps=2)

        async def offered(pilot: Pilot[Any]) -> None:
            await until(pilot, lambda: isinstance(pilot.app.screen, BudgetModal))
            await pilot.pause()

        assert snap_compare(app, terminal_size=(100, 32), run_before=offered)

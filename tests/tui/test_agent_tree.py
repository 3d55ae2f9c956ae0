"""The live sub-agent tree pane: a node per child, states and spend, queued counts, the filter."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.app import App, ComposeResult
from textual.widgets import Tree

from ioh_tui.core import events as ev
from ioh_tui.tui.widgets.agent_tree import AgentTree
from ioh_tui.tui.widgets.meter import Meter
from ioh_tui.tui.widgets.tool_call import ToolCall
from ioh_tui.tui.widgets.transcript import INLINE_AGENTS
from tests.snapshots.apps.fleet import tree_app
from tests.tui.harness import (
    USAGE,
    finished,
    run_screen,
    until,
)


def queued(tree: AgentTree) -> int:
    """The total of the `+N queued` counts on screen (the root's leaves that are no agent's)."""
    return sum(int(str(n.label).split()[0][1:]) for n in tree.root.children if n.data is None)


async def test_a_node_per_child_with_final_states_and_spend(tmp_path: Path) -> None:
    app = tree_app(tmp_path, 3)
    async with app.run_test(size=(140, 40)) as pilot:
        await finished(pilot)
        screen = run_screen(app)
        tree = screen.agent_tree
        await until(pilot, lambda: len(tree.nodes_by_agent) == 3 and not tree._dirty)
        assert tree.display and screen.has_class("-tree")
        labels = [str(node.label) for node in tree.nodes_by_agent.values()]
        root = str(tree.root.label)
        # The tree's header counts every agent; the tokens meter says it counts the root's.
        assert screen.query_one("#meter-tokens", Meter).label == "tokens · root agent"
    assert all("✓" in label and "done" in label for label in labels), labels
    assert all("2 st · 1.9k tok" in label for label in labels), labels
    assert sorted(label.split(" · ")[1] for label in labels) == [
        f"child task {i}" for i in range(3)
    ]
    assert "tree 7.7k/100k tok (ceiling)" in root and "3 done" in root and "0 queued" in root


async def test_queued_children_show_as_a_count(tmp_path: Path) -> None:
    app = tree_app(tmp_path, 4, max_concurrent=1, delay_ms=150)
    async with app.run_test(size=(140, 40)) as pilot:
        screen = run_screen(app)
        tree = screen.agent_tree
        await until(pilot, lambda: queued(tree) >= 2)
        queued_labels = [str(n.label) for n in tree.root.children if n.data is None]
        assert any(label.endswith("queued") and label.startswith("+") for label in queued_labels)
        # Queued children are a count, not nodes.
        assert len(tree.nodes_by_agent) <= 2
        await finished(pilot)
        await until(pilot, lambda: queued(tree) == 0 and len(tree.nodes_by_agent) == 4)


async def test_selecting_a_child_filters_the_transcript(tmp_path: Path) -> None:
    app = tree_app(tmp_path, 2)
    async with app.run_test(size=(140, 40)) as pilot:
        await finished(pilot)
        screen = run_screen(app)
        tree = screen.agent_tree
        await until(pilot, lambda: len(tree.nodes_by_agent) == 2 and not tree._dirty)
        child = sorted(tree.nodes_by_agent)[0]
        tree.focus()
        tree.move_cursor(tree.nodes_by_agent[child])
        await pilot.press("enter")
        await pilot.pause()
        transcript = screen.transcript

        def only() -> int | None:
            return transcript.only

        shown = [w for w in transcript.children if w.display]
        calls = [c for c in screen.query(ToolCall) if c.display]
        assert only() == child
        assert shown and all(w.has_class(f"-of-{child}") for w in shown)
        assert [c.agent for c in calls] == [child]
        assert len(shown) < len(transcript.children)
        # The root shows everything again; so does `a`.
        tree.move_cursor(tree.root)
        await pilot.press("enter")
        await pilot.pause()
        assert only() is None and all(w.display for w in transcript.children)
        tree.move_cursor(tree.nodes_by_agent[child])
        await pilot.press("enter")
        screen.transcript.focus()
        await pilot.press("a")
        await pilot.pause()
        assert only() is None and all(w.display for w in transcript.children)


async def test_a_larger_tree_shows_a_childs_steps_once_it_is_selected(tmp_path: Path) -> None:
    app = tree_app(tmp_path, INLINE_AGENTS + 1)
    async with app.run_test(size=(140, 40)) as pilot:
        await finished(pilot)
        screen = run_screen(app)
        tree, transcript = screen.agent_tree, screen.transcript
        await until(pilot, lambda: len(tree.nodes_by_agent) == INLINE_AGENTS + 1)
        # The every-agent view: the root's blocks, with a note on where the children's are.
        assert all(w.has_class("-of-root") for w in transcript.children if w.display)
        notes = [str(n.render()) for n in transcript.query(".note") if n.display]
        assert any(note.startswith(f"More than {INLINE_AGENTS} sub-agents") for note in notes)
        child = max(tree.nodes_by_agent)  # past the limit: none of its blocks was mounted
        assert not [w for w in transcript.children if w.has_class(f"-of-{child}")]
        tree.focus()
        tree.move_cursor(tree.nodes_by_agent[child])
        await pilot.press("enter")

        def lines() -> list[str]:
            return [c.line for c in screen.query(ToolCall) if c.display and c.agent == child]

        await until(pilot, lambda: bool(lines()))
        assert lines() == [f"[agent {child}] read calc.py"]
        assert all(w.has_class(f"-of-{child}") for w in transcript.children if w.display)


async def test_a_flat_run_has_no_tree_pane(tmp_path: Path) -> None:
    from tests.tui.harness import build

    app = build(tmp_path, {"text": "Nothing to do.", "usage": USAGE}, criterion=None)
    async with app.run_test(size=(140, 40)) as pilot:
        await finished(pilot)
        screen = run_screen(app)
        assert not screen.has_class("-tree")
        assert not screen.query_one(AgentTree).display


class OneTree(App[None]):
    """Just the tree pane, fed events by the test."""

    def compose(self) -> ComposeResult:
        yield AgentTree(id="tree")


@pytest.mark.parametrize(
    ("outcome", "drawn"),
    [
        ("finished", "✓ agent 2 done"),
        ("failed", "✗ agent 2 failed"),
        ("stalled", "✗ agent 2 failed"),
        ("awaiting_approval", "⏸ agent 2 paused on a decision"),
        ("cancelled", "■ agent 2 cancelled"),
        ("step_cap_reached", "▮ agent 2 stopped at a cap (steps)"),
        ("time_budget_exceeded", "▮ agent 2 stopped at a cap (time)"),
        ("cost_budget_exceeded", "▮ agent 2 stopped at a cap (tokens)"),
    ],
)
async def test_an_ended_agent_is_drawn_as_it_ended(outcome: str, drawn: str) -> None:
    app = OneTree()
    async with app.run_test() as pilot:
        tree = app.query_one(AgentTree)
        events: list[ev.Event] = [
            ev.RunStarted(run_id=1, agent_id=1, goal="root", mode="workspace", budgets={}),
            ev.AgentSpawned(run_id=1, agent_id=2, parent_id=1, goal="child"),
            ev.RunStarted(
                run_id=1, agent_id=2, parent_id=1, goal="child", mode="workspace", budgets={}
            ),
            ev.AgentFinished(run_id=1, agent_id=2, parent_id=1, outcome=outcome),
            ev.RunFinished(run_id=1, agent_id=1, outcome=outcome, steps=1, tokens=0),
        ]
        for event in events:
            tree.apply(event)
        tree.flush()
        await pilot.pause()
        child = str(tree.nodes_by_agent[2].label)
        root = str(tree.root.label)
    assert child.startswith(drawn), child
    assert root.startswith(drawn.replace("agent 2", "root")), root
    assert "tree 0 tok (no ceiling)" in root


async def test_a_ledger_change_draws_the_roots_line_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """The root's label changes with every frame of a running tree; its children's lines stay."""
    app = OneTree()
    async with app.run_test() as pilot:
        tree = app.query_one(AgentTree)
        tree.apply(ev.RunStarted(run_id=1, agent_id=1, goal="root", mode="workspace", budgets={}))
        for child in range(2, 7):
            tree.apply(ev.AgentSpawned(run_id=1, agent_id=child, parent_id=1, goal=f"task {child}"))
            tree.apply(
                ev.RunStarted(
                    run_id=1,
                    agent_id=child,
                    parent_id=1,
                    goal=f"task {child}",
                    mode="workspace",
                    budgets={},
                )
            )
        tree.flush()
        await pilot.pause()
        drawn: list[int] = []
        line = Tree._render_line

        def counted(self: Tree[int | None], y: int, *args: Any) -> Any:
            drawn.append(y)
            return line(self, y, *args)

        monkeypatch.setattr(Tree, "_render_line", counted)

        def status() -> ev.TreeStatus:
            return ev.TreeStatus(
                run_id=1, agents=6, working=5, queued=0, done=0, tokens=1200, token_ceiling=None
            )

        tree.apply(status())
        tree.flush()
        await pilot.pause()
        assert "tree 1.2k tok" in str(tree.root.label)
        assert drawn == [0], drawn  # the root's line; the five agents' lines were kept
        drawn.clear()
        tree.apply(status())  # the same counts again
        tree.flush()
        await pilot.pause()
        assert drawn == [], drawn

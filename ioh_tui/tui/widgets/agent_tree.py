"""AgentTree: the live sub-agent tree — one node per started agent under its parent.

Events only mark what changed; a timer redraws the changed nodes' labels (never the whole tree)
at most ten times a second, so a tree of hundreds of agents stays smooth. A label is made again
only when what it shows changed, and a drawn line is kept until its own node changes: Textual's
`Tree` draws every line again when any label above it changes, and the root's line (the tree's
ledger) changes with every agent that starts, spends or ends (measured in
benchmarks/bench_tui_tree.py: the tree was the largest part of a frame's drawing).
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import astuple, dataclass

from rich.text import Text
from textual.geometry import Region, Size
from textual.strip import Strip
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from ioh_tui.core import events as ev
from ioh_tui.tui.describe import one_line, tool_line
from ioh_tui.tui.widgets.settled import settled_size

FLUSH_S = 0.1
"""How often changed labels are redrawn."""
GOAL_WIDTH = 32

GLYPHS = {
    "queued": "…",
    "running": "⋯",
    "waiting": "?",
    "done": "✓",
    "failed": "✗",
    "paused": "⏸",
    "cancelled": "■",
    "capped": "▮",
}
"""A glyph per state, so the state reads without colour (NO_COLOR)."""
STATE_WORDS = {
    "queued": "queued",
    "running": "running",
    "waiting": "waiting on you",
    "done": "done",
    "failed": "failed",
    "paused": "paused on a decision",
    "cancelled": "cancelled",
    "capped": "stopped at a cap",
}
STYLES = {
    "waiting": "bold yellow",
    "done": "green",
    "failed": "red",
    "paused": "yellow",
    "cancelled": "dim",
    "capped": "yellow",
}
STATE_OF_OUTCOME = {
    "success": "done",
    "finished": "done",
    "awaiting_approval": "paused",
    "cancelled": "cancelled",
    "step_cap_reached": "capped",
    "time_budget_exceeded": "capped",
    "cost_budget_exceeded": "capped",
}
"""How an ended agent is drawn; any other outcome (`failed`, `stalled`) is `failed`."""
CAP_WORDS = {
    "step_cap_reached": "steps",
    "time_budget_exceeded": "time",
    "cost_budget_exceeded": "tokens",
}
"""Which cap stopped a `capped` agent."""


@dataclass(slots=True)
class AgentRow:
    """What the tree knows about one agent."""

    agent_id: int
    parent_id: int | None
    goal: str = ""
    state: str = "queued"
    activity: str = ""
    steps: int = 0
    tokens: int = 0
    outcome: str = ""
    """How the agent ended, once it has."""
    node: str = ""
    """The cluster node it runs on (`--ray`; `here`: the root's); empty: not on a cluster."""


@dataclass(slots=True)
class Ledger:
    """The tree-wide counts from the last `TreeStatus`."""

    agents: int = 0
    working: int = 0
    queued: int = 0
    done: int = 0
    tokens: int = 0
    token_ceiling: int | None = None


def compact(n: int) -> str:
    """A token count in few characters: 950, 7.7k, 100k, 1.2M."""
    if n < 1000:
        return str(n)
    if n < 1_000_000:
        return f"{n / 1000:.1f}k".replace(".0k", "k") if n < 10_000 else f"{n // 1000}k"
    return f"{n / 1_000_000:.1f}M"


def agent_label(row: AgentRow) -> Text:
    """One agent's line: glyph, id, state, goal, activity, spend."""
    label = Text()
    label.append(f"{GLYPHS[row.state]} agent {row.agent_id} ", style=STYLES.get(row.state, ""))
    label.append(state_words(row) + at_node(row), style=STYLES.get(row.state, ""))
    if row.goal:
        label.append(f" · {one_line(row.goal, GOAL_WIDTH)}")
    if row.state in ("running", "waiting") and row.activity:
        label.append(f" · {row.activity}", style="italic")
    label.append(f" · {row.steps} st · {compact(row.tokens)} tok", style="dim")
    return label


def state_words(row: AgentRow) -> str:
    """The state as words; a capped agent names its cap."""
    if row.state == "capped" and row.outcome in CAP_WORDS:
        return f"{STATE_WORDS['capped']} ({CAP_WORDS[row.outcome]})"
    return STATE_WORDS[row.state]


def at_node(row: AgentRow) -> str:
    """` @node` after the state, for an agent of a tree on a cluster."""
    return f" @{row.node}" if row.node else ""


def root_label(row: AgentRow | None, ledger: Ledger) -> Text:
    """The root's line: its state plus the tree-wide ledger against the tree's ceiling.

    `tree N/M tok (ceiling)`: every agent's tokens together against the tree's ceiling. The run
    view's tokens meter counts the root agent's own (`tokens · root agent`): each says which.
    """
    label = Text()
    if row is not None:
        style = STYLES.get(row.state, "")
        label.append(f"{GLYPHS[row.state]} root {state_words(row)}{at_node(row)} · ", style)
    ceiling = (
        f"/{compact(ledger.token_ceiling)} tok (ceiling)"
        if ledger.token_ceiling is not None
        else " tok (no ceiling)"
    )
    label.append(
        f"tree {compact(ledger.tokens)}{ceiling} · {ledger.working} working"
        f" · {ledger.queued} queued · {ledger.done} done",
        style="bold",
    )
    return label


class AgentTree(Tree[int | None]):
    """The agents of a tree run; Enter or a click on a node filters the transcript to it."""

    virtual_size = settled_size()
    """The pane's size never follows its lines (`height: 1fr`, labels cut to fit): a new line
    updates the scrollbars (`watch_virtual_size`), not the whole screen's layout."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("tree", data=None, id=id)
        self.show_root = True
        self.guide_depth = 2
        self.rows: dict[int, AgentRow] = {}
        """Every agent seen, by run id (queued ones included)."""
        self.ledger = Ledger()
        """The last tree-wide counts."""
        self.nodes_by_agent: dict[int, TreeNode[int | None]] = {}
        """The node of each started agent (the root agent is the tree's root node)."""
        self.root_agent: int | None = None
        self._queued_nodes: dict[int | None, TreeNode[int | None]] = {}
        self._dirty: set[int | None] = set()
        self._drawn: dict[int | None, Hashable] = {}
        """What each label was last made from (None: the root's), so an unchanged one is kept."""
        self._strips: dict[int, tuple[Hashable, Strip]] = {}
        """Each line drawn, by line number, with what it was drawn from."""
        self._pass: Hashable = None
        """What every line of one drawing pass shares (style, width, scroll, focus)."""

    def on_mount(self) -> None:
        """Redraw changed labels on a timer."""
        self.root.expand()
        self.set_interval(FLUSH_S, self.flush, name="agent-tree-flush")

    def _row(self, event: ev.Event) -> AgentRow:
        agent = event.agent_id
        if agent is None:  # an event not tagged with an agent belongs to the root
            agent = self.root_agent if self.root_agent is not None else 0
        row = self.rows.get(agent)
        if row is None:
            row = self.rows[agent] = AgentRow(agent, event.parent_id)
            if event.parent_id is None:
                self.root_agent = agent
                self.root.data = agent
        return row

    def apply(self, event: ev.Event) -> None:  # noqa: C901 - one arm per event kind
        """Take one event into the model; only marks what changed."""
        if isinstance(event, ev.TreeStatus):
            self.ledger = Ledger(
                event.agents,
                event.working,
                event.queued,
                event.done,
                event.tokens,
                event.token_ceiling,
            )
            self._dirty.add(None)
            return
        row = self._row(event)
        match event:
            case ev.AgentSpawned(goal=goal):
                row.goal = goal
            case ev.RunStarted():
                if row.state == "queued":
                    row.state = "running"
                    row.activity = "thinking"
            case ev.StepStarted(step=step):
                row.steps = max(row.steps, step)
                row.activity = "thinking"
            case ev.ToolCallStarted(name=name, arguments=arguments):
                row.activity = one_line(tool_line(name, arguments, None), 40)
            case ev.ApprovalRequested():
                row.state = "waiting"
            case ev.ApprovalResolved():
                if row.state == "waiting":
                    row.state = "running"
            case ev.UsageReported(input_tokens=i, output_tokens=o):
                row.tokens += i + o
            case ev.AgentFinished(outcome=outcome) | ev.RunFinished(outcome=outcome):
                row.state = STATE_OF_OUTCOME.get(outcome, "failed")
                row.outcome = outcome
                if row.agent_id == self.root_agent:  # nothing works or waits after the root
                    self.ledger.working = self.ledger.queued = 0
            case _:
                return
        self._dirty.add(row.agent_id)

    def place(self, nodes: dict[int, str]) -> None:
        """Take each agent's node label (`--ray`); only marks what changed."""
        for agent, node in nodes.items():
            row = self.rows.get(agent)
            if row is not None and row.node != node:
                row.node = node
                self._dirty.add(agent)

    def flush(self) -> None:
        """Redraw the labels of the agents that changed, adding nodes for newly started ones."""
        if not self._dirty:
            return
        dirty, self._dirty = self._dirty, set()
        for agent in sorted(dirty, key=lambda a: -1 if a is None else a):
            if agent is None or agent == self.root_agent:
                root = self.rows.get(self.root_agent) if self.root_agent is not None else None
                drawn = (None if root is None else astuple(root), astuple(self.ledger))
                if self._drawn.get(None) != drawn:
                    self._drawn[None] = drawn
                    self.root.set_label(root_label(root, self.ledger))
                continue
            row = self.rows[agent]
            node = self.nodes_by_agent.get(agent)
            drawn = astuple(row)
            if node is None:
                if row.state == "queued":
                    continue
                parent = self._parent_node(row)
                queued = self._queued_nodes.get(None) if parent is self.root else None
                parent.allow_expand = True
                node = parent.add(
                    agent_label(row), data=agent, before=queued, expand=True, allow_expand=False
                )
                self.nodes_by_agent[agent] = node
            elif self._drawn.get(agent) != drawn:
                node.set_label(agent_label(row))
            self._drawn[agent] = drawn
        self._queued_counts()

    # -- drawing: a line is drawn again only when its own node (or the pass's style) changed -----

    def render_lines(self, crop: Region) -> list[Strip]:
        """Note what this pass's lines share, then draw them (each from `_strips` if unchanged)."""
        self._pass = (
            self.rich_style,
            self.size.width,
            self.scroll_offset.x,
            self.virtual_size.width,
            self.get_pseudo_class_state(),
        )
        return super().render_lines(crop)

    def render_line(self, y: int) -> Strip:
        """Line `y` of the pane, drawn again only if its node, its guides or the style changed.

        Textual's own cache keys a line on every node above it (the root's label included) and
        on a counter every added node moves, so each new agent or ledger change drew the whole
        pane again. A line shows only its own node's label and its path's guides (each node's
        place among its siblings, hover and cursor), and its number (in its mouse metadata).
        """
        number = y + self.scroll_offset.y
        lines = self._tree_lines
        if number >= len(lines):
            return super().render_line(y)
        line = lines[number]
        node = line.node
        key = (
            self._pass,
            node._id,
            node._updates,
            line.last,
            self.cursor_line == number,
            self.hover_line == number,
            tuple((n._hover, n._selected, n.is_last) for n in line.path),
        )
        kept = self._strips.get(number)
        if kept is not None and kept[0] == key:
            return kept[1]
        strip = super().render_line(y)
        self._strips[number] = (key, strip)
        return strip

    def _invalidate(self) -> None:
        """The lines changed (an agent started, a queue emptied): draw them again, no layout pass.

        Textual's `Tree` asks for a layout of the whole screen here, and again when the rebuilt
        lines set `virtual_size`: two passes (20-40 ms each with a 100-agent run on screen) each
        time an agent starts. Only a pane whose height follows its lines needs them.
        """
        height = self.styles.height
        if height is None or height.is_auto:
            super()._invalidate()
            return
        self._clear_line_cache()
        self._updates += 1
        self.root._reset()
        self.refresh()

    def watch_virtual_size(self, size: Size) -> None:
        """The lines were rebuilt: the scrollbars follow them (a layout pass did this before)."""
        self._scroll_update(size)

    def notify_style_update(self) -> None:
        """A style or theme change: every line is drawn again."""
        self._strips.clear()
        super().notify_style_update()

    def _refresh_node(self, node: TreeNode[int | None]) -> None:
        # The root is on every line's path, so Textual repaints the whole pane when its label
        # changes; only its own line shows the label (its expansion goes through `_invalidate`).
        if node is self.root and self.show_root:
            if self.scroll_offset.y == 0:
                self._refresh_line(0)
            return
        super()._refresh_node(node)

    def _parent_node(self, row: AgentRow) -> TreeNode[int | None]:
        if row.parent_id is None or row.parent_id == self.root_agent:
            return self.root
        return self.nodes_by_agent.get(row.parent_id, self.root)

    def _queued_counts(self) -> None:
        """A `+N queued` leaf under the root while the concurrency cap holds children back.

        Queued children emit nothing until they start (`AgentSpawned` comes when one does), so the
        count is the tree's own, from `TreeStatus`.
        """
        count = self.ledger.queued
        node = self._queued_nodes.get(None)
        if count <= 0:
            if node is not None:
                node.remove()
                del self._queued_nodes[None]
            return
        label = Text(f"+{count} queued", style="dim")
        if node is None:
            self._queued_nodes[None] = self.root.add_leaf(label, data=None)
        elif str(node.label) != str(label):
            node.set_label(label)

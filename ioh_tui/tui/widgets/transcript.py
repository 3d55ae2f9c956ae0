"""The transcript: a scroll of step headers, streamed text and thinking, tool calls and notes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from textual.containers import VerticalScroll
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Static

from ioh_tui.tui.describe import tool_line
from ioh_tui.tui.widgets.agent_text import AgentText
from ioh_tui.tui.widgets.settled import settled_size
from ioh_tui.tui.widgets.tool_call import ToolCall

Key = tuple[int | None, int]
"""(agent, step): sub-agents' steps are kept apart from the root's."""

KEEP_BLOCKS = 200
"""Past this many blocks the oldest are pruned. Every layout pass walks every mounted widget (a
streamed Markdown block is several), so an unbounded transcript makes a 100-agent tree's screen
slower with each step (measured in benchmarks/bench_tui_tree.py). The store keeps everything:
the trace view and `ioh-tui show` read it there."""
MOUNT_EVERY_S = 0.1
"""New blocks are mounted together, at most this often: every mount costs the screen a layout pass,
and ten agents at once make blocks faster than passes can run (benchmarks/bench_tui_tree.py)."""
PRUNE_TO = 150
"""Pruning removes down to this many blocks at once, so it happens once per fifty blocks."""
INLINE_AGENTS = 4
"""While a run has at most this many sub-agents, their steps are shown with the root's. Past it,
the every-agent view keeps the root's steps (with its spawn and finish notes), and an agent's
steps are mounted only once it is selected in the tree: every mounted block costs each layout
pass, and a hundred agents' blocks kept keys waiting (benchmarks/bench_tui_tree.py)."""
HELD_MAX = 3_000
"""Held blocks kept in all, across agents (each is about 10 KB unmounted). Past it, the agent
holding the most gives up its oldest quarter, so a thousand agents cannot hold gigabytes."""


class Line(Static):
    """A one-line block: a step's header, a note."""

    virtual_size = settled_size()


class Transcript(VerticalScroll):
    """Everything the run said and did, newest at the bottom; stays at the bottom while you do."""

    virtual_size = settled_size()
    """Its scrollbars and the anchor are brought up to date by the pass that measured it."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.root: Path | None = None
        """The workspace root, to show paths relative to it."""
        self._open: dict[int | None, AgentText] = {}
        """The block each agent is streaming into (text and thinking alternate blocks)."""
        self._blocks: dict[Key, list[AgentText]] = {}
        self._calls: dict[tuple[int | None, str], ToolCall] = {}
        self.only: int | None = None
        """The sub-agent the transcript is filtered to (None: everything)."""
        self.pruned = 0
        """Blocks removed from the top so far (their content is in the store)."""
        self._pruned_note: Line | None = None
        self._waiting: list[Widget] = []
        """Blocks made but not mounted yet (the next `flush` mounts them, in order)."""
        self._mount_timer: Timer | None = None
        self.inline = True
        """Whether sub-agents' steps are shown with the root's (see `INLINE_AGENTS`)."""
        self._agents: set[int] = set()
        self._held: dict[int, list[Widget]] = {}
        """Sub-agents' blocks kept unmounted until their agent is selected (once not `inline`)."""
        self._held_count = 0

    def watch_has_focus(self, has_focus: bool) -> None:
        """Restyle the transcript alone when it gains or loses focus.

        Textual restyles every descendant of a widget whose focus changes, in case a rule reaches
        them through its `:focus`. No rule does here, and a transcript has hundreds of them: that
        was about 100 ms of every `tab` into or out of it (benchmarks/bench_tui_tree.py).
        """
        self.app.stylesheet.update_nodes([self], animate=True)

    def watch_virtual_size(self) -> None:
        """Let go of the anchor once everything fits (fewer lines shown, or a taller pane).

        An anchored Textual container scrolls so that its content's bottom meets its own, so
        content shorter than the pane would sit under blank lines. `_follow` anchors only when
        the content overflows, but it may judge by a layout that hiding blocks has not updated
        yet; this is the layout's own word, after it.
        """
        if self.is_anchored and self.max_scroll_y == 0:
            self.anchor(False)
            self.scroll_home(animate=False, immediate=True)

    async def mount_block(self, widget: Widget, agent: int | None = None) -> None:
        """Add a block at the end (mounted with the others of the next `MOUNT_EVERY_S`).

        A sub-agent's block is held back instead while it would not be shown (see `inline`).
        """
        owner = getattr(widget, "agent", agent)
        # Not restyled now (a held block may never be mounted): mounting styles it.
        widget.add_class(f"-of-{owner}" if owner is not None else "-of-root", update=False)
        if owner is not None and self.inline and owner not in self._agents:
            self._agents.add(owner)  # counted only until there are too many to show inline
            if len(self._agents) > INLINE_AGENTS:
                await self._stop_inline()
        if owner is not None and not self.inline and owner != self.only:
            held = self._held.setdefault(owner, [])
            held.append(widget)
            self._held_count += 1
            if len(held) > KEEP_BLOCKS:
                await self._forget(self._oldest(held, len(held) - PRUNE_TO))
            elif self._held_count > HELD_MAX:
                most = max(self._held.values(), key=len)
                await self._forget(self._oldest(most, max(1, len(most) // 4)))
            return
        widget.display = self._shows(widget)
        self._waiting.append(widget)
        self._mount_soon()

    def _mount_soon(self) -> None:
        if self._mount_timer is None:
            self._mount_timer = self.set_timer(MOUNT_EVERY_S, self.flush, name="mount")

    def _shows(self, block: Widget) -> bool:
        """Whether a block is shown under the current filter."""
        if block is self._pruned_note:
            return True
        if self.only is not None:
            return block.has_class(f"-of-{self.only}")
        return self.inline or block.has_class("-of-root")

    async def _stop_inline(self) -> None:
        """One sub-agent too many: from now on each agent's steps show when it is selected."""
        self.inline = False
        for block in [*self.children, *self._waiting]:
            block.display = self._shows(block)
        # What stays may be short: anchored, it would sit at the bottom under blank lines.
        self.anchor(False)
        self.call_after_refresh(self._follow)
        await self.note(
            f"More than {INLINE_AGENTS} sub-agents: this view keeps the root's steps;"
            " select an agent in the tree to read its own"
        )

    async def flush(self) -> None:
        """Mount the waiting blocks at once, prune, and follow once content overflows.

        The open streams are handed what they received, too.
        """
        if self._mount_timer is not None:
            self._mount_timer.stop()
            self._mount_timer = None
        for block in self._open.values():
            if block.is_mounted:
                await block.flush()
        waiting, self._waiting = self._waiting, []
        if not waiting:
            return
        await self.mount_all(waiting)
        if len(self.children) > KEEP_BLOCKS:
            await self._prune()
        if not self.is_anchored:
            self.call_after_refresh(self._follow)

    async def _prune(self) -> None:
        """Drop the oldest finished blocks; say how many are gone and where to read them."""
        old = self._oldest(self.children, len(self.children) - PRUNE_TO)
        if not old:
            return
        await self._forget(old)
        await self.remove_children(old)

    def _oldest(self, blocks: Sequence[Widget], count: int) -> list[Widget]:
        """The first `count` blocks that are finished (no open stream, no running call).

        A running `spawn_agent` call counts as finished once the tree is too big for `inline`: a
        root that spawned three hundred children would keep three hundred lines that only say
        "waiting for the child", which the tree pane shows better.
        """
        live: set[Widget] = set(self._open.values())
        live.update(
            c
            for c in self._calls.values()
            if c.status == "waiting"
            or (c.status == "running" and (self.inline or c.tool != "spawn_agent"))
        )
        return [w for w in blocks if w not in live and w is not self._pruned_note][:count]

    async def _forget(self, old: list[Widget]) -> None:
        """Count blocks as pruned, say so, and drop every reference to them.

        The caller unmounts them (if they were mounted).
        """
        gone = set(old)
        self._calls = {k: c for k, c in self._calls.items() if c not in gone}
        self._blocks = {
            k: kept
            for k, blocks in self._blocks.items()
            if (kept := [b for b in blocks if b not in gone])
        }
        for owner, held in list(self._held.items()):
            self._held[owner] = [b for b in held if b not in gone]
        self._held_count = sum(map(len, self._held.values()))
        self.pruned += len(old)
        text = f"{self.pruned} earlier blocks are not shown here: the full trace is in the store"
        if self._pruned_note is None:
            self._pruned_note = Line(text, classes="note -pruned", markup=False)
            await self.mount(self._pruned_note, before=0 if self.children else None)
        else:
            self._pruned_note.update(text)

    def _follow(self) -> None:
        # Anchored only once there is more than a screenful: an anchored Textual container
        # bottom-aligns short content, and a transcript reads better from the top.
        if not self.is_anchored and self.max_scroll_y > 0:
            self.anchor()

    def show_only(self, agent: int | None) -> None:
        """Show only one sub-agent's lines (None: every agent's, as far as `inline` allows)."""
        self.only = agent
        if agent is not None and (held := self._held.pop(agent, None)):
            self._held_count -= len(held)
            self._waiting.extend(held)  # mounted at the end: only their agent shows them
            self._mount_soon()
        for block in [*self.children, *self._waiting]:
            block.display = self._shows(block)
        # Unanchored, so that a short transcript reads from the top; anchored again (following
        # the newest lines) once it fills the pane.
        self.anchor(False)
        self.call_after_refresh(self._follow)

    @property
    def calls(self) -> list[ToolCall]:
        """Every tool call not pruned, in order (a held sub-agent's too)."""
        return list(self._calls.values())

    def text_of(self, step: int, *, thinking: bool = False, agent: int | None = None) -> str:
        """Everything streamed into a step's text (or thinking) blocks."""
        blocks = self._blocks.get((agent, step), [])
        return "".join(b.text for b in blocks if b.thinking == thinking)

    async def start_step(self, step: int, agent: int | None = None, who: str = "") -> None:
        """A header for a new step."""
        await self._close(agent)
        label = f"step {step}" + (f" · {who}" if who else "")
        await self.mount_block(Line(label, classes="step-header", markup=False), agent)

    async def append(self, step: int, fragment: str, *, thinking: bool, agent: int | None) -> None:
        """Stream a fragment of text or thinking into the agent's current block."""
        block = self._open.get(agent)
        if block is None or block.thinking != thinking or block.step != step:
            await self._close(agent)
            block = AgentText(step=step, thinking=thinking, agent=agent)
            self._open[agent] = block
            self._blocks.setdefault((agent, step), []).append(block)
            await self.mount_block(block)
        await block.write(fragment)

    async def void(self, step: int, agent: int | None, note: str) -> None:
        """Drop a step's streamed output (a retry voids it) and say so."""
        await self._close(agent)
        for block in self._blocks.pop((agent, step), []):
            if block in self._waiting:
                self._waiting.remove(block)
            elif agent is not None and block in self._held.get(agent, []):
                self._held[agent].remove(block)
                self._held_count -= 1
            else:
                await block.remove()
        await self.note(note, "-retry", agent)

    async def add_call(
        self, call_id: str, name: str, arguments: Mapping[str, Any], agent: int | None
    ) -> ToolCall:
        """A new tool call line (its status starts as running)."""
        await self._close(agent)
        call = ToolCall(
            call_id=call_id,
            name=name,
            arguments=arguments,
            line=(f"[agent {agent}] " if agent is not None else "")
            + tool_line(name, arguments, self.root),
            agent=agent,
        )
        self._calls[(agent, call_id)] = call
        await self.mount_block(call)
        return call

    def call(self, call_id: str, agent: int | None = None) -> ToolCall | None:
        """The call with this id, if shown."""
        return self._calls.get((agent, call_id))

    def running_call(self, agent: int | None = None) -> ToolCall | None:
        """The agent's most recent call that has not finished."""
        for (owner, _), call in reversed(self._calls.items()):
            if owner == agent and call.status in ("running", "waiting"):
                return call
        return None

    async def note(self, text: str, classes: str = "", agent: int | None = None) -> None:
        """A one-line remark (a decision, a gate result, the outcome)."""
        await self.mount_block(Line(text, classes=f"note {classes}".strip(), markup=False), agent)

    async def close_stream(self, agent: int | None) -> None:
        """Flush and close one agent's open stream (its step ended)."""
        await self._close(agent)

    async def finish_streams(self) -> None:
        """Mount what waits, then flush and close every open stream (the end of the run)."""
        await self.flush()
        for agent in list(self._open):
            await self._close(agent)

    async def _close(self, agent: int | None) -> None:
        block = self._open.pop(agent, None)
        if block is not None:
            await block.close()

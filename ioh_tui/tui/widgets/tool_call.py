"""One tool call: a line "verb + path" with live status, a running output tail, details on Enter."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, ClassVar, Literal

from rich.text import Text
from textual.app import RenderResult
from textual.binding import Binding, BindingType
from textual.events import Click
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Static

from ioh_tui.tui.describe import tail, visible
from ioh_tui.tui.pictures import Stored
from ioh_tui.tui.widgets.image_view import ImageShelf, graphics
from ioh_tui.tui.widgets.settled import settled_size

CallStatus = Literal["running", "waiting", "ok", "error", "refused", "deferred", "cancelled"]

_GLYPHS: dict[str, str] = {
    "running": "⋯",
    "waiting": "?",
    "ok": "✓",
    "error": "✗",
    "refused": "⊘",
    "deferred": "⏸",
    "cancelled": "■",
}
"""A glyph per status, so the state reads without colour (NO_COLOR)."""

TAIL_LINES = 4
"""Lines of a running command's output shown under its line while it runs."""
KEEP_CHARS = 64_000
"""Live output kept per call; the full observation arrives with the finish event anyway."""


PARTS = ("line", "images", "tail", "arguments", "output")
"""A call's parts, in screen order."""
_IMAGE = re.compile(r"shown to you as (.+) \((image/\w+), ([\d,]+) bytes, (\d+x\d+)\)")
"""An image an observation says it attached (`tools/images.py` writes it so)."""


class CallLine(Widget):
    """A call's line once the call has parts below it (its first child)."""

    DEFAULT_CSS = """
    CallLine {
        height: 1;
    }
    """
    virtual_size = settled_size()

    def render(self) -> RenderResult:
        """The call's line, fitted to this row."""
        call = self.parent
        assert isinstance(call, ToolCall)
        return call._header(self.content_size.width)


class ToolCall(Widget, can_focus=True):
    """A collapsed tool call that expands (Enter or click) to its arguments and output."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "enter,space", "toggle_details", "Details", tooltip="Show or hide arguments and output"
        ),
        Binding("i", "open_image", "Image", tooltip="The call's images at the pane's size"),
    ]
    """Enter (or space) toggles the details of the focused call; i opens its images."""

    virtual_size = settled_size()
    status: reactive[CallStatus] = reactive("running")
    """Where the call is: running, waiting on a decision, or how it ended."""
    expanded: reactive[bool] = reactive(False)
    """Whether the arguments and output are shown."""

    class Toggled(Message):
        """The call was expanded or collapsed."""

        def __init__(self, call: ToolCall) -> None:
            super().__init__()
            self.call = call

    def __init__(
        self,
        *,
        call_id: str,
        name: str,
        arguments: Mapping[str, Any],
        line: str,
        agent: int | None = None,
    ) -> None:
        super().__init__(classes="-running")
        self.call_id = call_id
        """The provider's call id."""
        self.tool = name
        """The tool's name."""
        self.arguments = dict(arguments)
        """The call's arguments, as the model sent them."""
        self.line = line
        """The one-line description: verb and workspace-relative path."""
        self.agent = agent
        """The asking sub-agent's run id; None for the root."""
        self.live = ""
        """Output streamed so far (its last `KEEP_CHARS` characters)."""
        self.output = ""
        """What the model was told, once the call finished."""
        self.summary = ""
        """The observation's first line, once finished."""
        self.images: list[str] = []
        """A line for each image the call attached (name, bytes, dimensions), once finished."""
        self.stored: Stored | None = None
        """Where the store keeps the attached images (the image view reads them there)."""
        self._parts: dict[str, Widget] = {}
        self._line: CallLine | None = None
        """The line as a child, once the call has parts below it."""

    def render(self) -> RenderResult:
        """The line, drawn by the call itself until it has parts (then its first child draws it).

        A run of a hundred agents makes thousands of calls, and every layout pass walks every
        mounted widget: a call that never streams output and is never opened stays one widget.
        """
        return "" if self._line is not None else self._header(self.content_size.width)

    def _draw_line(self) -> None:
        """Draw the line again: it is one row whatever it says, so no layout pass is needed.

        A layout pass over a long transcript costs tens of milliseconds, and a fleet's calls
        finish many times a second (benchmarks/bench_tui_tree.py).
        """
        (self if self._line is None else self._line).refresh()

    def on_mount(self) -> None:
        """Output that came while the call was being mounted: show its tail now."""
        if self.live:
            self._show_tail()
        if self.images:
            self._show_images()

    def _part(self, name: str, initial: str = "") -> Static:
        """The part `tool-call--<name>`, mounted on first use (kept here: a mount lands later)."""
        part = self._parts.get(name)
        if isinstance(part, Static):
            return part
        part = Static(initial, classes=f"tool-call--{name}", markup=False)
        self._place(name, part)
        return part

    def _place(self, name: str, part: Widget) -> None:
        """Mount a part in its place; the first part mounts the line too, as a child above it."""
        if self._line is None:
            self._line = CallLine(classes="tool-call--line")
            self.mount(self._line)
        self._parts[name] = part
        later = [self._parts[p] for p in PARTS[PARTS.index(name) + 1 :] if p in self._parts]
        if later:
            self.mount(part, before=later[0])
        else:
            self.mount(part)

    def _arguments(self) -> str:
        shown, _ = visible(json.dumps(self.arguments, indent=2, ensure_ascii=False))
        return f"arguments:\n{shown}"

    def _header(self, width: int = 0) -> Text:
        """The line: glyph, what the call does, how it went; fitted to one row of `width` cells.

        The line gives up its end first (…), down to half the row; then the summary gives up its
        end. 0: not fitted.
        """
        glyph = Text(f"{_GLYPHS[self.status]} ")
        after = Text()
        if self.summary:
            after = Text(f"  {self.summary}", style="dim")
        elif self.status == "waiting":
            after = Text("  waiting on you", style="bold")
        line = Text(self.line)
        room = width - glyph.cell_len - after.cell_len
        if width and line.cell_len > room:
            # The line keeps at least half the row (what the call does), the summary the rest.
            line.truncate(max(room, (width - glyph.cell_len) // 2), overflow="ellipsis")
        header = Text.assemble(glyph, line, after, style="bold")
        if width and header.cell_len > width:
            header.truncate(width, overflow="ellipsis")
        return header

    def add_output(self, chunk: str) -> None:
        """Append live output and show its tail."""
        self.live = (self.live + chunk)[-KEEP_CHARS:]
        self.add_class("-tail", update=self.is_attached)
        if self.is_mounted:
            self._show_tail()

    def _show_tail(self) -> None:
        shown, _ = visible(tail(self.live, TAIL_LINES))
        self._part("tail").update(shown)
        self._refresh_output()

    def finish(
        self, *, ok: bool, refused: bool, summary: str, output: str, stored: Stored | None = None
    ) -> None:
        """Record how the call ended (`stored`: where its images are, if it attached any)."""
        self.output = output
        self.summary = _short(summary)
        self.status = "refused" if refused else ("ok" if ok else "error")
        # The name is a path the model chose: escaped like every other text it shapes.
        self.images = [
            visible(f"▣ image {m[1]}: {m[3]} bytes, {m[4]} ({m[2]})")[0]
            for m in _IMAGE.finditer(output)
        ]
        self.stored = stored
        if self.images and self.is_mounted:
            self._show_images()

    def _show_images(self) -> None:
        # Under the line, opened or not: drawn where the terminal can (`image_view`), else text.
        if "images" not in self._parts:
            self._place("images", ImageShelf(self.images, self.stored, classes="tool-call--images"))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """`i` is offered on a call whose images can be drawn."""
        if action == "open_image":
            return bool(self.images) and self.stored is not None and graphics() is not None
        return True

    def action_open_image(self) -> None:
        """The `i` key: the call's images at the pane's size."""
        if isinstance(shelf := self._parts.get("images"), ImageShelf):
            shelf.open()

    def _refresh_output(self) -> None:
        if not self.expanded:
            return  # drawn when opened
        body = self.output or self.live
        shown, _ = visible(body) if body else ("(no output yet)", 0)
        self._part("output").update(f"output:\n{shown}")

    def watch_status(self, old: CallStatus, new: CallStatus) -> None:
        """Re-draw the line and move the state class.

        An unmounted call (a held sub-agent's, see `Transcript.inline`) is restyled only once
        mounted: restyling each of a hundred agents' calls was most of a frame's work.
        """
        attached = self.is_attached
        self.remove_class(f"-{old}", update=False)
        self.add_class(f"-{new}", update=attached)
        if self.is_mounted:
            self._draw_line()
            self._refresh_output()

    def watch_expanded(self, expanded: bool) -> None:
        """Show or hide the details."""
        self.set_class(expanded, "-expanded")
        if expanded and self.is_mounted:
            self._part("arguments", self._arguments())
            self._refresh_output()

    def action_toggle_details(self) -> None:
        """Expand or collapse."""
        self.expanded = not self.expanded
        self.post_message(self.Toggled(self))

    def on_click(self, event: Click) -> None:
        """A click toggles too."""
        event.stop()
        self.focus()
        self.action_toggle_details()


def _short(summary: str) -> str:
    """The summary without its leading `[tag]`, which repeats the line.

    `[read calc.py] (2 lines)` gives `(2 lines)`; `[exec `cmd` exit 1]` gives `exit 1`;
    `[child "goal" -> finished, 4 steps]` gives `finished, 4 steps`.
    """
    if not (summary.startswith("[") and "]" in summary):
        return summary
    tag, rest = summary[1 : summary.index("]")], summary[summary.index("]") + 1 :].strip()
    if rest:
        return rest
    if tag.startswith('child "') and " -> " in tag:
        return tag.split(" -> ", 1)[1]  # the line already names the child's goal
    after_command = tag.rsplit("`", 1)[1].strip() if tag.count("`") >= 2 else ""
    return after_command or summary

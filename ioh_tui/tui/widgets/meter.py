"""A budget meter: a label, "used / limit", and a bar that changes colour near the limit."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from ioh_tui.tui.describe import LimitState, limit_state

_MARKS: dict[LimitState, str] = {"": "", "-warn": " !", "-danger": " !!"}
"""Near a limit the reading also gains marks, so colour is never the only signal (NO_COLOR)."""


class Meter(Widget):
    """One budget (steps, time, tokens or cost), or the context window's fill.

    Two lines when it has the room (the reading, then a bar); one line when the layout gives it a
    single row (narrow terminals). The state classes `-warn` and `-danger` are set near the limit.
    """

    COMPONENT_CLASSES: ClassVar[set[str]] = {"meter--label", "meter--bar", "meter--empty"}
    """Styled in `run.tcss`: the label, the filled part and the empty part of the bar."""

    value: reactive[float] = reactive(0.0)
    """How much is used."""
    limit: reactive[float | None] = reactive(None)
    """The budget; None when there is none (no bar is drawn)."""
    reading: reactive[str] = reactive("")
    """The reading as shown, e.g. `3 / 12` or `1.2k / 50k`."""

    def __init__(self, label: str, *, unbounded: str = "no budget", id: str | None = None) -> None:
        super().__init__(id=id)
        self.label = label
        """What is measured (the run screen renames the context meter for a chosen agent)."""
        self.unbounded = unbounded
        """What the bar says while there is no limit."""

    @property
    def state(self) -> LimitState:
        """`-warn`, `-danger` or empty."""
        return limit_state(self.value, self.limit)

    def show(self, value: float, limit: float | None, reading: str) -> None:
        """Set the value, the limit and how they read."""
        self.value = value
        self.limit = limit
        self.reading = reading

    def relabel(self, label: str) -> None:
        """Name what is measured anew (a repaint: the size stays)."""
        if label != self.label:
            self.label = label
            self.refresh()

    def watch_value(self) -> None:
        """Move the state class."""
        self._restate()

    def watch_limit(self) -> None:
        """Move the state class."""
        self._restate()

    def _restate(self) -> None:
        state = self.state
        self.set_class(state == "-warn", "-warn")
        self.set_class(state == "-danger", "-danger")

    def render(self) -> Text:
        """The reading, and a bar on the second row (or after the reading on a single row)."""
        width = max(1, self.size.width)
        label_style = self.get_component_rich_style("meter--label")
        reading = self.reading + _MARKS[self.state]
        if self.size.height >= 2:
            head = Text(self.label, style=label_style)
            gap = max(1, width - len(self.label) - len(reading))
            head.append(" " * gap + reading)
            return Text("\n").join([head, self._bar(width)])
        line = Text(f"{self.label} ", style=label_style)
        line.append(reading)
        room = width - len(line) - 1
        if room >= 4:
            line.append(" ")
            line.append_text(self._bar(room))
        return line

    def _bar(self, width: int) -> Text:
        if not self.limit:
            return Text(
                self.unbounded.ljust(width)[:width],
                style=self.get_component_rich_style("meter--empty"),
            )
        filled = min(width, round(width * min(1.0, self.value / self.limit)))
        bar = Text("█" * filled, style=self.get_component_rich_style("meter--bar"))
        bar.append("░" * (width - filled), style=self.get_component_rich_style("meter--empty"))
        return bar

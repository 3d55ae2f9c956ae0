"""Model text or thinking of one step, fed token by token through Textual's `MarkdownStream`."""

from __future__ import annotations

from textual.timer import Timer
from textual.widgets import Markdown
from textual.widgets.markdown import MarkdownStream

FLUSH_S = 1 / 20
"""Fragments are handed to the stream at most this often. A Markdown append (and the re-layout it
causes) costs far more than a token; Textual's docs put the widget's pace near 20 appends a second,
which still reads as live. Measured in benchmarks/bench_tui_stream.py."""


class AgentText(Markdown):
    """One run of streamed model output (text, or thinking with the `-thinking` class).

    Fragments go through a `MarkdownStream`, which appends to the document (it never re-renders the
    whole reply per chunk) and batches whatever arrives while it is busy.
    """

    def __init__(self, *, step: int, thinking: bool = False, agent: int | None = None) -> None:
        super().__init__(classes="-thinking" if thinking else "-text")
        self.step = step
        """The step whose output this is."""
        self.thinking = thinking
        """Whether this block is the model's reasoning rather than its answer."""
        self.agent = agent
        """The agent (sub-agent run id) that produced it; None for the root."""
        self._stream: MarkdownStream | None = None
        self._pieces: list[str] = []
        self._unsent: list[str] = []
        self._timer: Timer | None = None
        self._finished = False

    @property
    def text(self) -> str:
        """Everything received so far (the screen may show it up to `FLUSH_S` later)."""
        return "".join(self._pieces)

    @property
    def streaming(self) -> bool:
        """Whether more output may still come."""
        return not self._finished

    async def write(self, fragment: str) -> None:
        """Take a fragment; it reaches the stream at the next flush (once the block is mounted)."""
        self._pieces.append(fragment)
        if self.agent is not None and len(self._pieces) == 1:
            # Sub-agents stream concurrently with the root; each block says whose it is.
            self._unsent.append(f"**[agent {self.agent}]** ")
        self._unsent.append(fragment)
        if self.is_mounted:
            self._schedule()

    def _schedule(self) -> None:
        if self._stream is None:
            # Created on the caller's task (the run screen, or this block's mount), never on the
            # flush timer's: the stream's task mounts blocks into this widget.
            self._stream = Markdown.get_stream(self)
        if self._timer is None:
            self._timer = self.set_timer(FLUSH_S, self._flush, name="flush")

    def on_mount(self) -> None:
        """Mounted (the transcript mounts blocks in batches): stream what came meanwhile.

        After the first refresh: `Markdown` sets its (empty) document as it mounts, which would
        replace anything appended before that.
        """
        if self._unsent:
            self.call_after_refresh(self._caught_up)

    async def _caught_up(self) -> None:
        self._schedule()
        if self._finished:
            await self.close()

    async def flush(self) -> None:
        """Hand what came so far to the stream now, not at the next timer."""
        if self._timer is not None:
            self._timer.stop()
        await self._flush()

    async def _flush(self) -> None:
        self._timer = None
        if self._unsent and self._stream is not None:
            batch = "".join(self._unsent)
            self._unsent.clear()
            await self._stream.write(batch)

    async def close(self) -> None:
        """Flush what is pending and stop the stream (the step's output is complete)."""
        self._finished = True
        if not self.is_mounted:
            return  # `on_mount` streams it all and closes
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        await self._flush()
        if self._stream is not None:
            stream, self._stream = self._stream, None
            await stream.stop()

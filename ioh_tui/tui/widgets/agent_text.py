"""Model text or thinking of one step, fed token by token through Textual's `MarkdownStream`."""

from __future__ import annotations

from textual.timer import Timer
from textual.widgets import Markdown
from textual.widgets.markdown import MarkdownStream

FLUSH_S = 1 / 30
"""Fragments are handed to the stream at most this often: a Markdown append costs far more than a
token, and 30 updates a second reads as live while cutting the rendering work many times over."""


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
        self._pending: list[str] = []
        self._timer: Timer | None = None
        self._closed = False

    @property
    def text(self) -> str:
        """Everything received so far (the screen may show it up to `FLUSH_S` later)."""
        return "".join(self._pieces)

    @property
    def streaming(self) -> bool:
        """Whether more output may still come."""
        return not self._closed

    async def write(self, fragment: str) -> None:
        """Take a fragment; it reaches the stream at the next flush."""
        self._pieces.append(fragment)
        self._pending.append(fragment)
        if self._timer is None:
            self._timer = self.set_timer(FLUSH_S, self._flush, name="flush")

    async def _flush(self) -> None:
        self._timer = None
        if not self._pending:
            return
        batch = "".join(self._pending)
        self._pending.clear()
        if self._stream is None:
            self._stream = Markdown.get_stream(self)
            if self.agent is not None:
                # Sub-agents stream concurrently with the root; each block says whose it is.
                batch = f"**[agent {self.agent}]** {batch}"
        await self._stream.write(batch)

    async def close(self) -> None:
        """Flush what is pending and stop the stream (the step's output is complete)."""
        self._closed = True
        if self._timer is not None:
            self._timer.stop()
        await self._flush()
        if self._stream is not None:
            stream, self._stream = self._stream, None
            await stream.stop()

"""Model text or thinking of one step, fed token by token through Textual's `MarkdownStream`."""

from __future__ import annotations

from textual.widgets import Markdown
from textual.widgets.markdown import MarkdownStream


class AgentText(Markdown):
    """One run of streamed model output (text, or thinking with the `-thinking` class).

    Fragments go through a `MarkdownStream`, which batches them when they arrive faster than the
    widget can render, instead of re-rendering the whole reply for every chunk.
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

    @property
    def text(self) -> str:
        """Everything received so far (the stream may not have rendered all of it yet)."""
        return "".join(self._pieces)

    async def write(self, fragment: str) -> None:
        """Append a fragment; the stream starts on the first one."""
        self._pieces.append(fragment)
        if self._stream is None:
            self._stream = Markdown.get_stream(self)
            if self.agent is not None and len(self._pieces) == 1:
                # Sub-agents stream concurrently with the root; each block says whose it is.
                await self._stream.write(f"**[agent {self.agent}]** ")
        await self._stream.write(fragment)

    async def close(self) -> None:
        """Flush what is pending and stop the stream (the step's output is complete)."""
        if self._stream is not None:
            stream, self._stream = self._stream, None
            await stream.stop()

    @property
    def streaming(self) -> bool:
        """Whether the stream is still open."""
        return self._stream is not None

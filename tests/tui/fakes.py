"""A model whose stream the test releases chunk by chunk, to watch text arrive on screen."""

from __future__ import annotations

import asyncio

from ioh_tui.core.transcript import (
    AttemptSink,
    Completion,
    Request,
    StreamSink,
    TextPiece,
    Usage,
)


class GatedProvider:
    """Streams `chunks` as the first answer, one per `release()`; later answers end the run."""

    def __init__(self, chunks: list[str], *, model: str = "gated-model") -> None:
        self.chunks = chunks
        self._model = model
        self._gate: asyncio.Queue[None] = asyncio.Queue()
        self.waiting = False
        """Whether the stream is blocked, waiting for the next `release()`."""
        self.sent = 0
        """Chunks streamed so far."""
        self.calls = 0

    @property
    def name(self) -> str:
        return "gated"

    @property
    def model(self) -> str | None:
        return self._model

    def release(self) -> None:
        """Let one more chunk through."""
        self._gate.put_nowait(None)

    async def complete(
        self,
        request: Request,
        *,
        on_piece: StreamSink | None = None,
        on_attempt: AttemptSink | None = None,
        deadline: float | None = None,
        max_retries: int | None = None,
    ) -> Completion:
        self.calls += 1
        if self.calls > 1:
            return Completion(text="done", usage=Usage(10, 5))
        for chunk in self.chunks:
            self.waiting = True
            await self._gate.get()
            self.waiting = False
            if on_piece is not None:
                on_piece(TextPiece(chunk))
            self.sent += 1
        return Completion(text="".join(self.chunks), usage=Usage(100, 20))

    async def aclose(self) -> None:
        return None

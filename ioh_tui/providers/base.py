"""The provider protocol the engine calls; every back-end (wire or scripted) satisfies it."""

from __future__ import annotations

from typing import Protocol

from ioh_tui.core.transcript import AttemptSink, Completion, Request, StreamSink


class Provider(Protocol):
    """A model back-end.

    `complete` streams pieces to `on_piece` as they arrive and returns the assembled completion.
    Retryable failures are retried inside (up to `max_retries`, exponential backoff honouring
    `Retry-After`); each attempt is reported to `on_attempt`. A wait that would end after
    `deadline` (a `time.monotonic()` instant) is not taken: the error is raised instead.
    A failure that survives its retries raises `ProviderError`.
    """

    @property
    def name(self) -> str:
        """Short provider name for the trace (`openai`, `anthropic`, `scripted`, ...)."""
        ...

    @property
    def model(self) -> str | None:
        """The model slug requests go to."""
        ...

    async def complete(
        self,
        request: Request,
        *,
        on_piece: StreamSink | None = None,
        on_attempt: AttemptSink | None = None,
        deadline: float | None = None,
    ) -> Completion:
        """Make one completion (with retries)."""
        ...

    async def aclose(self) -> None:
        """Release connections."""
        ...

"""The provider protocol the engine calls, and the `ALLOW_REMOTE` kill switch every wire obeys.

`ALLOW_REMOTE` is read at every request, so a test suite that sets it to False before anything
runs is sure no request leaves the machine: a provider whose endpoint is not a loopback address
fails with a non-retryable `transport` error before it opens a connection. It lives here, in the
module every provider imports (as pydantic-ai keeps `ALLOW_MODEL_REQUESTS` in its base models
module), so the wire client checks it without importing the registry that builds the providers.
"""

from __future__ import annotations

import ipaddress
from typing import Protocol

import httpx

from ioh_tui.core.errors import ProviderError
from ioh_tui.core.transcript import AttemptSink, Completion, Request, StreamSink

ALLOW_REMOTE: bool = True
"""When False, only loopback endpoints may be called (tests turn it off)."""


def is_loopback(url: str) -> bool:
    """Whether `url` points at this machine (`localhost`, 127.0.0.0/8 or ::1)."""
    try:
        host = httpx.URL(url).host
    except httpx.InvalidURL:
        return False
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def ensure_allowed(url: str) -> None:
    """Raise a non-retryable `transport` error for a remote URL while `ALLOW_REMOTE` is off."""
    if not ALLOW_REMOTE and not is_loopback(url):
        raise ProviderError(
            "transport",
            f"remote endpoint {url} refused: remote calls are off (providers.base.ALLOW_REMOTE)",
            retryable=False,
        )


class Provider(Protocol):
    """A model back-end.

    `complete` streams pieces to `on_piece` as they arrive and returns the assembled completion.
    Retryable failures are retried inside (up to `max_retries`, exponential backoff honouring
    `Retry-After`); each attempt is reported to `on_attempt`. A wait that would end after
    `deadline` (a `time.monotonic()` instant) is not taken: the error is raised instead.
    `max_retries`, when given, is this call's retry count and overrides the provider's own
    (a run passes its contract's, so `TaskContract.with_max_retries` reaches any provider).
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
        max_retries: int | None = None,
    ) -> Completion:
        """Make one completion (with retries)."""
        ...

    async def aclose(self) -> None:
        """Release connections."""
        ...

"""One place for retries: backoff honouring `Retry-After`, bounded by the run's deadline."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from ioh_tui.core.control import BudgetExhausted
from ioh_tui.core.errors import ProviderError
from ioh_tui.core.transcript import Attempt, AttemptSink, Completion

Sleep = Callable[[float], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Backoff: `base_s * 2**(attempt-1)` capped at `max_s`; a server's `Retry-After` wins."""

    base_s: float = 0.5
    max_s: float = 30.0

    def wait_s(self, attempt: int, error: ProviderError) -> float:
        """How long to wait after failed attempt number `attempt` (1-based)."""
        if error.retry_after is not None:
            return max(0.0, error.retry_after)
        return float(min(self.base_s * 2 ** (attempt - 1), self.max_s))


async def call_with_retries(
    attempt_once: Callable[[], Awaitable[Completion]],
    *,
    provider: str,
    model: str | None,
    max_retries: int,
    policy: RetryPolicy = RetryPolicy(),
    on_attempt: AttemptSink | None = None,
    deadline: float | None = None,
    sleep: Sleep = asyncio.sleep,
) -> Completion:
    """Run `attempt_once` until it succeeds, a failure is not retryable, or retries run out.

    Every attempt is reported to `on_attempt` (success or failure, with the wait before the next).
    Raises the last `ProviderError`; `BudgetExhausted` when the wait would pass `deadline`.
    """
    attempt = 1
    while True:
        started = time.monotonic()
        try:
            completion = await attempt_once()
        except ProviderError as error:
            latency = (time.monotonic() - started) * 1000
            failure = error.kind if error.status is None else f"{error.kind} (HTTP {error.status})"
            retry = error.retryable and attempt <= max_retries
            wait = policy.wait_s(attempt, error) if retry else None
            if wait is not None and deadline is not None and time.monotonic() + wait > deadline:
                _report(on_attempt, Attempt(attempt, provider, model, latency, failure=failure))
                raise BudgetExhausted(
                    error.kind,
                    f"{error.args[0]}; a retry in {wait:.1f}s would outlast the time budget",
                    status=error.status,
                    retryable=False,
                ) from error
            _report(
                on_attempt,
                Attempt(attempt, provider, model, latency, failure=failure, retry_in_s=wait),
            )
            if wait is None:
                raise
            await sleep(wait)
            attempt += 1
            continue
        latency = (time.monotonic() - started) * 1000
        _report(
            on_attempt,
            Attempt(
                attempt,
                provider,
                completion.model or model,
                latency,
                ttft_ms=completion.ttft_ms,
                usage=completion.usage,
                stop_reason=completion.stop_reason,
            ),
        )
        return completion


def _report(sink: AttemptSink | None, attempt: Attempt) -> None:
    if sink is not None:
        sink(attempt)

"""One place for retries: capped backoff with jitter, `Retry-After` capped, bounded by the deadline.

The wait after failed attempt `k` is drawn from `[ceiling/2, ceiling]` with `ceiling =
min(base_s * 2**(k-1), max_s)` ("equal jitter"): half of it fixed, so a retry never comes back at
once, half random, so many clients failing together (every run on a machine, every sub-agent of a
tree) do not come back together either. A server's `Retry-After` (or `retry-after-ms`) is taken as
asked, without jitter, up to `RETRY_AFTER_CAP_S`: a longer ask waits the cap, because a run should
not sleep an hour on one header. No wait may end after the run's deadline: that is a
`BudgetExhausted` raised at once, not a sleep that ends with nothing left to try in.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from ioh_tui.core.control import BudgetExhausted
from ioh_tui.core.errors import ProviderError
from ioh_tui.core.transcript import Attempt, AttemptSink, Completion

Sleep = Callable[[float], Awaitable[None]]

RETRY_AFTER_CAP_S = 60.0
"""The longest a server's `Retry-After` is honoured for; a longer ask waits this long."""
_MAX_DOUBLINGS = 60
"""Beyond this the ceiling is `max_s` anyway; capping the exponent keeps the float finite."""


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How long to wait between attempts.

    Args:
        base_s: the ceiling of the first wait; it doubles with each failed attempt.
        max_s: the largest ceiling.
        jitter: the random share of each wait (0.5: equal jitter; 0: none, the ceiling itself).
        retry_after_cap_s: the longest a server's `Retry-After` is honoured for.
        rng: a uniform draw in [0, 1); `random.Random(seed).random` makes the waits repeatable.
    """

    base_s: float = 1.0
    max_s: float = 30.0
    jitter: float = 0.5
    retry_after_cap_s: float = RETRY_AFTER_CAP_S
    rng: Callable[[], float] = random.random

    def ceiling_s(self, attempt: int) -> float:
        """The largest wait after failed attempt number `attempt` (1-based)."""
        doublings = min(max(0, attempt - 1), _MAX_DOUBLINGS)
        return float(min(self.base_s * 2**doublings, self.max_s))

    def wait_s(self, attempt: int, error: ProviderError) -> float:
        """How long to wait after failed attempt number `attempt` (1-based)."""
        if error.retry_after is not None:
            return min(max(0.0, error.retry_after), self.retry_after_cap_s)
        ceiling = self.ceiling_s(attempt)
        return ceiling * (1.0 - self.jitter) + ceiling * self.jitter * self.rng()


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

    Every attempt is reported to `on_attempt` (success or failure, with the wait before the next:
    the very wait then slept). Raises the last `ProviderError`; `BudgetExhausted` when the wait
    would pass `deadline`.
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

"""A provider that falls over to the next back-end when one cannot answer (reference-harness §9.7).

Each provider runs its own retries first. When it still fails with a *retryable* kind (rate limit,
overload, server, transport, timeout, malformed or cut stream), the same request goes to the next.
So does a provider whose next retry would outlast the run's time budget: that provider cannot be
waited for, but the next may answer at once within what is left. A non-retryable failure (auth, a
refused request, a context overflow) is raised at once: another back-end would be asked the same
bad request, and a bad key is something the user must fix.

`--fallback PROVIDER[:MODEL]` (interface.md §8) builds one in `cli/options.py` `build_provider`.

The switch is announced through `on_attempt`: the failed attempt that ends a provider's turn is
reported with `extra={"fallback_to": NAME}` just before the next provider is asked, so a
consumer (the engine's `fallback` event) can say so before the next provider's pieces stream.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence

from ioh_tui.core.control import BudgetExhausted
from ioh_tui.core.errors import ProviderError
from ioh_tui.core.transcript import Attempt, AttemptSink, Completion, Request, StreamSink
from ioh_tui.providers.base import Provider

FALLBACK_TO = "fallback_to"
"""The `Attempt.extra` key naming the provider asked next, on the attempt that ended a turn."""


class Fallback:
    """Try each provider in order; `last_served` names the one that answered.

    Pieces stream from whichever provider is answering, so a consumer may see a partial answer
    from one before the next starts (the same as a retried attempt); every attempt of every
    provider is reported to `on_attempt`, with its own provider name.

    Args:
        providers: the chain, primary first (at least one).
    """

    def __init__(self, providers: Sequence[Provider]) -> None:
        if not providers:
            raise ValueError("Fallback needs at least one provider")
        self.providers = tuple(providers)
        self.last_served: str | None = None
        """The name of the provider that answered the last successful request (the innermost
        one when a chain holds a chain)."""
        self._served: Provider | None = None

    @property
    def name(self) -> str:
        """The chain, e.g. `openrouter -> anthropic`."""
        return " -> ".join(p.name for p in self.providers)

    @property
    def model(self) -> str | None:
        """The model of the provider that answered last, else the primary's."""
        return (self._served or self.providers[0]).model

    def for_agent(self, goal: str) -> Fallback:
        """The chain a sub-agent with this goal talks to: each provider's own for it."""
        chain = []
        for provider in self.providers:
            for_agent = getattr(provider, "for_agent", None)
            chain.append(for_agent(goal) if callable(for_agent) else provider)
        return Fallback(chain)

    async def complete(
        self,
        request: Request,
        *,
        on_piece: StreamSink | None = None,
        on_attempt: AttemptSink | None = None,
        deadline: float | None = None,
        max_retries: int | None = None,
    ) -> Completion:
        """Ask each provider in turn until one answers; `max_retries` is each one's.

        Raises:
            ProviderError: the first non-retryable failure, or the last provider's failure.
        """
        last = len(self.providers) - 1
        for position, provider in enumerate(self.providers):
            held = _LastFailure(on_attempt)
            try:
                completion = await provider.complete(
                    request,
                    on_piece=on_piece,
                    on_attempt=held,
                    deadline=deadline,
                    max_retries=max_retries,
                )
            except ProviderError as error:
                if position == last or not _falls_over(error, deadline):
                    held.release(None)
                    raise
                held.release(_first_name(self.providers[position + 1]))
                continue
            held.release(None)
            self._served = provider
            inner = getattr(provider, "last_served", None)
            self.last_served = inner if isinstance(inner, str) else provider.name
            return completion
        raise AssertionError("unreachable: the last provider either answers or raises")

    async def aclose(self) -> None:
        """Close every provider, even when one fails to close; the first failure is raised."""
        failures: list[BaseException] = []
        for provider in self.providers:
            try:
                await provider.aclose()
            except Exception as exc:
                failures.append(exc)
        if failures:
            raise failures[0]


def _falls_over(error: ProviderError, deadline: float | None) -> bool:
    """Whether the next provider may be asked after `error` (see the module docstring)."""
    if isinstance(error, BudgetExhausted):
        return deadline is None or deadline > time.monotonic()
    return error.retryable


def _first_name(provider: Provider) -> str:
    """The name of the provider a chain asks first (a nested chain's first leaf)."""
    inner = getattr(provider, "providers", None)
    if isinstance(inner, tuple) and inner:
        return _first_name(inner[0])
    return provider.name


class _LastFailure:
    """Passes attempts on, holding back a failure that may be a provider's last.

    A failed attempt with no retry scheduled ends the provider's turn; whether the chain falls
    over is known only once the error reaches `Fallback.complete`, which then releases it, marked
    with the provider asked next. Every attempt still reaches the sink, once, in order.
    """

    def __init__(self, sink: AttemptSink | None) -> None:
        self._sink = sink
        self._held: Attempt | None = None

    def __call__(self, attempt: Attempt) -> None:
        self.release(None)
        ends_a_turn = attempt.failure is not None and attempt.retry_in_s is None
        if ends_a_turn and FALLBACK_TO not in attempt.extra:
            self._held = attempt
        elif self._sink is not None:
            self._sink(attempt)

    def release(self, next_provider: str | None) -> None:
        held, self._held = self._held, None
        if held is None or self._sink is None:
            return
        if next_provider is not None:
            held = dataclasses.replace(held, extra={**held.extra, FALLBACK_TO: next_provider})
        self._sink(held)

"""A provider that falls over to the next back-end when one cannot answer (reference-harness §9.7).

Each provider runs its own retries first. When it still fails with a *retryable* kind (rate limit,
overload, server, transport, timeout, malformed or cut stream), the same request goes to the next.
A non-retryable failure (auth, a refused request, a context overflow, a retry that would outlast the
time budget) is raised at once: another back-end would be asked the same bad request, or a bad key
is something the user must fix, and the time budget is the run's, not one provider's.

No command line option builds one yet: `--fallback PROVIDER[:MODEL]` (interface.md §8) is the
next issue's, and wires this class in `cli/options.py` `build_provider`. Until then only tests
reach it; it stays because that option is promised.
"""

from __future__ import annotations

from collections.abc import Sequence

from ioh_tui.core.errors import ProviderError
from ioh_tui.core.transcript import AttemptSink, Completion, Request, StreamSink
from ioh_tui.providers.base import Provider


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

    async def complete(
        self,
        request: Request,
        *,
        on_piece: StreamSink | None = None,
        on_attempt: AttemptSink | None = None,
        deadline: float | None = None,
    ) -> Completion:
        """Ask each provider in turn until one answers.

        Raises:
            ProviderError: the first non-retryable failure, or the last provider's failure.
        """
        for position, provider in enumerate(self.providers):
            try:
                completion = await provider.complete(
                    request, on_piece=on_piece, on_attempt=on_attempt, deadline=deadline
                )
            except ProviderError as error:
                if not error.retryable or position == len(self.providers) - 1:
                    raise
                continue
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

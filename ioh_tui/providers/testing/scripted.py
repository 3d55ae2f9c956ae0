"""A deterministic in-process model that plays a scenario, streaming like a real one.

It drives the tests, the demo and the snapshots. Errors in the scenario surface exactly as the wire
providers surface them (same kinds, same retries), so failure handling is exercised end to end.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace
from pathlib import Path

from ioh_tui.core.errors import ProviderError
from ioh_tui.core.transcript import (
    AttemptSink,
    Completion,
    Request,
    StreamSink,
    Usage,
)
from ioh_tui.providers.classify import classify_status, classify_stream_error
from ioh_tui.providers.retry import RetryPolicy, Sleep, call_with_retries
from ioh_tui.providers.testing.fake_wire import stream_error_type
from ioh_tui.providers.testing.scenario import (
    ErrorCursor,
    Scenario,
    TurnCounter,
    load_scenario,
    turn_calls,
    turn_pieces,
    turn_usage,
)

FAST_RETRIES = RetryPolicy(base_s=0.01, max_s=0.05)
"""A scripted model's failures are make-believe: retry them quickly."""


class ScriptedProvider:
    """Plays a `Scenario` (or a scenario file)."""

    def __init__(
        self,
        scenario: Scenario | str | Path,
        *,
        max_retries: int = 2,
        retry: RetryPolicy = FAST_RETRIES,
        sleep: Sleep = asyncio.sleep,
        name: str = "scripted",
        model: str | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
    ) -> None:
        # Like every provider it takes base_url= and api_key=; a scripted model needs neither.
        del base_url, api_key
        self.scenario = scenario if isinstance(scenario, Scenario) else load_scenario(scenario)
        if model is not None:
            self.scenario = replace(self.scenario, model=model)
        self.max_retries = max_retries
        self._retry = retry
        self._sleep = sleep
        self._name = name
        self._errors = ErrorCursor()
        self._turns = TurnCounter()
        self.requests: list[Request] = []
        """Every request received, for tests."""

    @property
    def name(self) -> str:
        """`scripted`."""
        return self._name

    @property
    def model(self) -> str | None:
        """The scenario's model name."""
        return self.scenario.model

    def for_agent(self, goal: str) -> ScriptedProvider:
        """The provider a sub-agent with this goal talks to."""
        return ScriptedProvider(
            self.scenario.for_agent(goal),
            max_retries=self.max_retries,
            retry=self._retry,
            sleep=self._sleep,
            name=self._name,
        )

    async def complete(
        self,
        request: Request,
        *,
        on_piece: StreamSink | None = None,
        on_attempt: AttemptSink | None = None,
        deadline: float | None = None,
        max_retries: int | None = None,
    ) -> Completion:
        """Serve the turn the request's transcript calls for."""
        self.requests.append(request)
        return await call_with_retries(
            lambda: self._attempt(request, on_piece),
            provider=self.name,
            model=self.model,
            max_retries=self.max_retries if max_retries is None else max_retries,
            policy=self._retry,
            on_attempt=on_attempt,
            deadline=deadline,
            sleep=self._sleep,
        )

    async def aclose(self) -> None:
        """Nothing to release."""

    async def _attempt(self, request: Request, on_piece: StreamSink | None) -> Completion:
        if self.scenario.overflows(request):
            raise ProviderError(
                "context_overflow",
                "scripted: this model's maximum context length is "
                f"{self.scenario.context_window:,} tokens (context_length_exceeded)",
                retryable=False,
            )
        index = self._turns.index(request)
        turn = self.scenario.turn_for(request, index)
        failure = self._errors.next(index, turn.errors)
        if failure is not None and failure.status is not None:
            raise classify_status(
                failure.status, f"scripted HTTP {failure.status}", failure.retry_after_s
            )
        started = time.monotonic()
        if turn.delay_ms:
            await asyncio.sleep(turn.delay_ms / 1000)
        ttft = (time.monotonic() - started) * 1000
        cut_after = failure.disconnect_after_chunks if failure is not None else None
        for sent, piece in enumerate(turn_pieces(turn, index)):
            if cut_after is not None and sent >= cut_after:
                raise ProviderError("transport", "the stream was cut mid-way (scripted disconnect)")
            if on_piece is not None:
                on_piece(piece)
            if turn.chunk_delay_ms:
                await asyncio.sleep(turn.chunk_delay_ms / 1000)
        if cut_after is not None:
            raise ProviderError("transport", "the stream was cut mid-way (scripted disconnect)")
        if failure is not None and failure.stream_error is not None:
            # Classified as the fake server's event for it is, so both paths fail alike.
            raise classify_stream_error(
                failure.stream_error, stream_error_type(failure.stream_error)
            )
        input_tokens, output_tokens = turn_usage(turn, request)
        return Completion(
            text=turn.text,
            thinking=turn.thinking,
            tool_calls=turn_calls(turn, index),
            usage=Usage(input_tokens=input_tokens, output_tokens=output_tokens),
            stop_reason="tool_calls" if turn.tool_calls else "stop",
            model=self.scenario.model,
            ttft_ms=ttft,
            latency_ms=(time.monotonic() - started) * 1000,
        )

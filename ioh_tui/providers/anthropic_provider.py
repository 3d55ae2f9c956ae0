"""The Anthropic Messages provider (`ANTHROPIC_API_KEY`, `ANTHROPIC_MODEL`)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any

import httpx

from ioh_tui.core.transcript import Request, StreamSink
from ioh_tui.providers.anthropic_wire import AnthropicAssembler, build_body
from ioh_tui.providers.http import (
    DEFAULT_STALL_TIMEOUT_S,
    DEFAULT_TIMEOUT_S,
    StreamAssembler,
    WireProvider,
    check_base_url,
    require,
)
from ioh_tui.providers.pricing import PriceTable
from ioh_tui.providers.reasoning import THINKING_BUDGETS
from ioh_tui.providers.retry import RetryPolicy, Sleep
from ioh_tui.providers.sse import ServerSentEvent
from ioh_tui.providers.whole import anthropic_events

ANTHROPIC_BASE_URL = "https://api.anthropic.com"
ANTHROPIC_VERSION = "2023-06-01"


class Anthropic(WireProvider):
    """Anthropic's Messages API, streamed.

    `base_url` is the host part, as in the official SDK (`https://api.anthropic.com`); a base
    that already ends in `/v1` is accepted too. `reasoning` (`low`, `medium`, `high`) turns
    extended thinking on with that effort's budget (`reasoning.THINKING_BUDGETS`).
    """

    def __init__(
        self,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        model: str | None = None,
        max_retries: int = 2,
        client: httpx.AsyncClient | None = None,
        timeout: float | None = DEFAULT_TIMEOUT_S,
        stall_timeout_s: float = DEFAULT_STALL_TIMEOUT_S,
        prices: PriceTable | None = None,
        retry: RetryPolicy | None = None,
        sleep: Sleep = asyncio.sleep,
        reasoning: str | None = None,
    ) -> None:
        key = require(api_key, "ANTHROPIC_API_KEY")
        base = check_base_url(base_url or ANTHROPIC_BASE_URL)
        endpoint = f"{base}/messages" if base.endswith("/v1") else f"{base}/v1/messages"
        super().__init__(
            name="anthropic",
            endpoint=endpoint,
            model=require(model, "ANTHROPIC_MODEL"),
            api_key=key,
            max_retries=max_retries,
            client=client,
            timeout=timeout,
            stall_timeout_s=stall_timeout_s,
            prices=prices,
            retry=retry,
            sleep=sleep,
            reasoning=reasoning,
        )

    def build_body(self, request: Request, model: str) -> dict[str, Any]:
        """The Messages body (extended thinking on when a reasoning effort was given)."""
        budget = THINKING_BUDGETS[self.reasoning] if self.reasoning else None
        return build_body(request, model, thinking_budget=budget)

    def whole_events(self, whole: Any) -> list[ServerSentEvent] | None:
        """A Messages `message` object as its stream's events (a server that ignored `stream`)."""
        return anthropic_events(whole)

    def headers(self, key: str | None) -> dict[str, str]:
        """`x-api-key` and the API version the wire format here was written against."""
        headers = {"anthropic-version": ANTHROPIC_VERSION}
        if key:
            headers["x-api-key"] = key
        return headers

    def assembler(
        self, on_piece: StreamSink | None, used_ids: Iterable[str], started: float
    ) -> StreamAssembler:
        """An Anthropic-wire assembler."""
        return AnthropicAssembler(on_piece, used_ids=used_ids, started=started)

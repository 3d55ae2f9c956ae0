"""Shared HTTP streaming for the wire providers: one POST, SSE decoding, errors mapped to kinds.

Retries are not done here: `complete` hands one attempt at a time to `call_with_retries`.
Errors map as: HTTP status through `classify_status` (with `Retry-After` or `retry-after-ms`
honoured); a refused redirect is `malformed` (redirects are off); connection and read failures
(including a cut chunked body) are `transport`; httpx timeouts, the per-attempt `timeout` and a
stream silent for longer than `stall_timeout_s` are `timeout`.

The API key is held in a `Secret` whose repr is masked, and is scrubbed from every error message
this module builds, so it never reaches a log, an event or the store.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import os
import time
from collections.abc import Iterable
from typing import Any, Protocol

import httpx

from ioh_tui import __version__
from ioh_tui.core.errors import ConfigError, ProviderError
from ioh_tui.core.redact import Redactor, hold
from ioh_tui.core.transcript import AttemptSink, Completion, Request, StreamSink
from ioh_tui.providers.assemble import transcript_call_ids
from ioh_tui.providers.base import ensure_allowed
from ioh_tui.providers.classify import classify_status, error_summary, parse_retry_after
from ioh_tui.providers.pricing import PriceTable
from ioh_tui.providers.reasoning import checked_effort
from ioh_tui.providers.retry import RetryPolicy, Sleep, call_with_retries
from ioh_tui.providers.sse import EventStream, ServerSentEvent
from ioh_tui.providers.whole import answers_json, read_whole

DEFAULT_TIMEOUT_S = 600.0
"""Longest one attempt may take, first byte to last (the original's request timeout)."""
DEFAULT_STALL_TIMEOUT_S = 120.0
"""Longest a stream may stay silent (keep-alive comments count as traffic)."""


_MIN_SECRET_LEN = 8


class Secret:
    """A credential that never shows itself in a repr, a str or an f-string."""

    __slots__ = ("_value",)

    def __init__(self, value: str | None) -> None:
        self._value = value or None
        # Every redactor made from now on masks it too, wherever it turns up (issue 18, item 9).
        hold(self._value)

    def reveal(self) -> str | None:
        """The value, for the one header that needs it."""
        return self._value

    def redact(self, text: str) -> str:
        """`text` with every occurrence of the value masked.

        Placeholder keys of a few characters (`x` for a local server) are left alone: masking
        them would shred the message and they protect nothing.
        """
        if self._value is None or len(self._value) < _MIN_SECRET_LEN:
            return text
        # A message cut short (error texts are capped) may hold the key's first half: masked too.
        return Redactor([self._value]).text(text)

    def __repr__(self) -> str:
        return "Secret('***')" if self._value else "Secret(None)"

    __str__ = __repr__


def from_env(name: str) -> str | None:
    """An environment variable; empty counts as unset."""
    return os.environ.get(name) or None


def require(value: str | None, env_name: str) -> str:
    """`value`, or the environment variable, or a `ConfigError` saying it is not set."""
    value = value or from_env(env_name)
    if not value:
        raise ConfigError(f"{env_name} is not set")
    return value


def check_base_url(base_url: str) -> str:
    """A usable http(s) base URL without its trailing slash, else `ConfigError`.

    A URL carrying a user name or password (`https://user:KEY@host/`) is refused without being
    repeated: the run's base URL is stored with it and shown by `show`, so a key there would
    leak (issue 18, item 9). The key goes in its variable instead.
    """
    try:
        url = httpx.URL(base_url)
    except (httpx.InvalidURL, TypeError):
        url = None
    authority = base_url.partition("://")[2].partition("/")[0]
    if (url is not None and url.userinfo) or "@" in authority:
        raise ConfigError(
            "the base URL carries a user name or password (user:secret@host): refused, so it "
            "is never stored; give the key in the provider's variable (e.g. OPENAI_API_KEY)"
        )
    if url is None or url.scheme not in ("http", "https") or not url.host:
        raise ConfigError(f"base URL {base_url!r} is not an http(s) URL")
    return base_url.rstrip("/")


class StreamAssembler(Protocol):
    """What a wire's assembler offers the HTTP layer."""

    def feed(self, event: ServerSentEvent) -> bool:
        """Take one event; True when the stream's terminator arrived."""
        ...

    def feed_all(self, events: Iterable[ServerSentEvent]) -> bool:
        """Take a network chunk's events, in order, as `feed` would; True at the terminator."""
        ...

    def finish(self) -> Completion:
        """The assembled completion, or the `ProviderError` the stream amounts to."""
        ...


class WireProvider:
    """Base of the HTTP providers; subclasses give the body, headers and assembler."""

    def __init__(
        self,
        *,
        name: str,
        endpoint: str,
        model: str,
        api_key: str | None,
        max_retries: int,
        client: httpx.AsyncClient | None,
        timeout: float | None,
        stall_timeout_s: float,
        prices: PriceTable | None,
        retry: RetryPolicy | None,
        sleep: Sleep,
        reasoning: str | None = None,
    ) -> None:
        self._name = name
        self.reasoning = checked_effort(reasoning)
        """The reasoning effort asked of the model (`reasoning.EFFORTS`; None: its default)."""
        self.endpoint = endpoint
        self._model = model
        self._key = Secret(api_key)
        self.max_retries = max_retries
        self._timeout = timeout
        self._http_timeout = httpx.Timeout(stall_timeout_s)
        self._prices = PriceTable.builtin() if prices is None else prices
        self._retry = retry or RetryPolicy()
        self._sleep = sleep
        self._owns_client = client is None
        # Made on first use: building a TLS context costs tens of milliseconds, and a provider
        # constructed only to validate configuration should not pay it.
        self._client = client

    @property
    def name(self) -> str:
        """Short provider name for the trace."""
        return self._name

    @property
    def model(self) -> str | None:
        """The model slug requests go to."""
        return self._model

    def __repr__(self) -> str:
        kind = type(self).__name__
        return f"{kind}(name={self._name!r}, model={self._model!r}, endpoint={self.endpoint!r})"

    async def complete(
        self,
        request: Request,
        *,
        on_piece: StreamSink | None = None,
        on_attempt: AttemptSink | None = None,
        deadline: float | None = None,
        max_retries: int | None = None,
    ) -> Completion:
        """Stream one completion, retrying retryable failures (see `Provider`).

        Pieces of a failed attempt have already gone to `on_piece`; the retry streams afresh.
        `max_retries`, when given, is this call's retry count (a run's contract), not the
        provider's own.
        """
        model = request.model or self._model
        body = json.dumps(self.build_body(request, model), ensure_ascii=False).encode()
        used_ids = transcript_call_ids(request)
        return await call_with_retries(
            lambda: self._attempt(body, model, used_ids, on_piece, deadline),
            provider=self._name,
            model=model,
            max_retries=self.max_retries if max_retries is None else max_retries,
            policy=self._retry,
            on_attempt=on_attempt,
            deadline=deadline,
            sleep=self._sleep,
        )

    async def aclose(self) -> None:
        """Close the HTTP client if this provider made it."""
        if self._owns_client and self._client is not None:
            await self._client.aclose()
            self._client = None

    async def __aenter__(self) -> WireProvider:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def build_body(self, request: Request, model: str) -> dict[str, Any]:
        """The wire's JSON body (subclasses)."""
        raise NotImplementedError

    def headers(self, key: str | None) -> dict[str, str]:
        """The wire's auth and version headers (subclasses)."""
        raise NotImplementedError

    def assembler(
        self, on_piece: StreamSink | None, used_ids: Iterable[str], started: float
    ) -> StreamAssembler:
        """A fresh assembler for one attempt (subclasses)."""
        raise NotImplementedError

    async def _attempt(
        self,
        body: bytes,
        model: str,
        used_ids: set[str],
        on_piece: StreamSink | None,
        deadline: float | None,
    ) -> Completion:
        ensure_allowed(self.endpoint)
        started = time.monotonic()
        assembler = self.assembler(on_piece, used_ids, started)
        headers = {
            "content-type": "application/json",
            "accept": "text/event-stream",
            "user-agent": f"ioh-tui/{__version__}",
            **self.headers(self._key.reveal()),
        }
        try:
            async with asyncio.timeout(self._attempt_budget(deadline)):
                async with self._http().stream(
                    "POST",
                    self.endpoint,
                    content=body,
                    headers=headers,
                    timeout=self._http_timeout,
                    follow_redirects=False,
                ) as response:
                    if response.status_code != 200:
                        raise await self._http_error(response)
                    if answers_json(response):
                        assembler.feed_all(await read_whole(response, self.whole_events))
                    else:
                        await _consume(response, assembler)
            completion = assembler.finish()
        except ProviderError as exc:
            # An error event inside a 200 stream carries the server's words, which may echo
            # the key back (issue 18, item 9).
            raise self._redacted(exc) from None
        except httpx.TimeoutException as exc:
            silent = f"no data for {self._http_timeout.read}s"
            raise ProviderError("timeout", self._describe(exc, silent)) from None
        except TimeoutError as exc:
            message = "the attempt ran out of time (its timeout or the run's deadline)"
            raise ProviderError("timeout", self._describe(exc, message)) from None
        except httpx.HTTPError as exc:
            raise ProviderError("transport", self._describe(exc, "connection failed")) from None
        return self._priced(completion, model)

    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = httpx.AsyncClient(follow_redirects=False, timeout=self._http_timeout)
        return self._client

    def _attempt_budget(self, deadline: float | None) -> float | None:
        if deadline is None:
            return self._timeout
        left = max(0.0, deadline - time.monotonic())
        return left if self._timeout is None else min(left, self._timeout)

    async def _http_error(self, response: httpx.Response) -> ProviderError:
        status = response.status_code
        if 300 <= status < 400:
            where = response.headers.get("location", "elsewhere")
            return ProviderError(
                "malformed",
                self._key.redact(f"redirected to {where}; redirects are not followed"),
                status=status,
                retryable=False,
            )
        try:
            raw = await response.aread()
        except httpx.HTTPError:
            raw = b""
        summary = error_summary(raw.decode("utf-8", "replace"))
        return classify_status(status, self._key.redact(summary), _retry_after(response.headers))

    def whole_events(self, whole: Any) -> list[ServerSentEvent] | None:
        """A whole (non-streamed) answer as its stream's events; None: not one (subclasses).

        `providers/whole.py` writes them for each wire.
        """
        return None

    def _priced(self, completion: Completion, model: str) -> Completion:
        usage = completion.usage
        if usage is None or usage.cost_usd is not None:
            return completion
        cost = self._prices.cost(completion.model or model, usage)
        if cost is None and completion.model and completion.model != model:
            cost = self._prices.cost(model, usage)
        if cost is None:
            return completion
        return dataclasses.replace(completion, usage=dataclasses.replace(usage, cost_usd=cost))

    def _redacted(self, exc: ProviderError) -> ProviderError:
        said = str(exc.args[0]) if exc.args else ""
        message = self._key.redact(said)
        if message == said:
            return exc
        return ProviderError(
            exc.kind,
            message,
            status=exc.status,
            retry_after=exc.retry_after,
            retryable=exc.retryable,
        )

    def _describe(self, exc: BaseException, fallback: str) -> str:
        detail = str(exc) or fallback
        return self._key.redact(f"{type(exc).__name__}: {detail} ({self.endpoint})")


_DRAIN_BYTES = 64 * 1024
_DRAIN_S = 0.25


async def _consume(response: httpx.Response, assembler: StreamAssembler) -> None:
    """Feed the stream's events to the assembler until its terminator, then drain the rest.

    Reading the few bytes after the terminator (the end of the chunked body) lets httpx put the
    connection back in its pool, saving a TLS handshake on the next call. The drain is bounded
    in bytes and time: a server that keeps talking after the end only costs the connection.
    """
    chunks = response.aiter_bytes()
    stream = EventStream()
    # A network chunk's events in one call each way: the per-event cost is the assembler's work,
    # not a generator's yield and a method call (docs/performance.md, the stream's profile).
    async for chunk in chunks:
        if assembler.feed_all(stream.decode(chunk)):
            break
    else:
        return
    drained = 0
    with contextlib.suppress(httpx.HTTPError, TimeoutError):
        async with asyncio.timeout(_DRAIN_S):
            async for chunk in chunks:
                drained += len(chunk)
                if drained > _DRAIN_BYTES:
                    break


def _retry_after(headers: httpx.Headers) -> float | None:
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    return parse_retry_after(headers.get("retry-after"))

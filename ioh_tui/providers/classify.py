"""Map HTTP failures to `ProviderError` kinds, as the original classifies them."""

from __future__ import annotations

import email.utils
import json
import time

from ioh_tui.core.errors import ProviderError

_OVERFLOW_MARKERS = (
    "context_length_exceeded",
    "maximum context length",
    "reduce the length of the messages",
    "prompt is too long",
    "exceed context limit",
    "context window",
    "too many tokens",
)


def classify_status(status: int, body: str, retry_after: float | None = None) -> ProviderError:
    """The error for an HTTP failure status and its body text.

    401/402/403 are `auth` (never retried); 408 `timeout` (OpenRouter's upstream timed out);
    429 `rate_limited`; 529 and 503 `overloaded`; other 5xx `server`; a 400/413 naming the
    context window `context_overflow`; any other client error is `malformed` and not retried (the
    request itself was refused).
    """
    message = body.strip()[:500] or f"HTTP {status}"
    lowered = body.lower()
    if status in (401, 402, 403):
        return ProviderError("auth", message, status=status)
    if status == 408:
        return ProviderError("timeout", message, status=status, retry_after=retry_after)
    if status == 429:
        return ProviderError("rate_limited", message, status=status, retry_after=retry_after)
    if status in (503, 529):
        return ProviderError("overloaded", message, status=status, retry_after=retry_after)
    if status >= 500:
        return ProviderError("server", message, status=status, retry_after=retry_after)
    if status in (400, 413) and any(marker in lowered for marker in _OVERFLOW_MARKERS):
        return ProviderError("context_overflow", message, status=status, retryable=False)
    return ProviderError("malformed", message, status=status, retryable=False)


_STREAM_ERROR_KINDS = {
    "overloaded_error": "overloaded",
    "overloaded": "overloaded",
    "rate_limit_error": "rate_limited",
    "rate_limit_exceeded": "rate_limited",
    "api_error": "server",
    "server_error": "server",
    "internal_server_error": "server",
}


def classify_stream_error(message: str, *codes: object) -> ProviderError:
    """The error for an error event that arrived inside a 200 stream.

    `codes` are the event's error type and code, most telling first. The first one that means
    something decides: a vendor type string (`overloaded_error` is `overloaded`,
    `rate_limit_error` `rate_limited`, `api_error`/`server_error` `server`) or, as OpenRouter
    sends, an HTTP-like number (429, 5xx, 529). Anything else is `stream_error`.
    """
    text = message.strip()[:500] or "the stream carried an error event"
    for code in codes:
        kind = _stream_kind(code)
        if kind is not None:
            return ProviderError(kind, text)
    return ProviderError("stream_error", text)


def _stream_kind(code: object) -> str | None:
    if isinstance(code, str):
        return _STREAM_ERROR_KINDS.get(code)
    if isinstance(code, bool) or not isinstance(code, int):
        return None
    if code == 429:
        return "rate_limited"
    if code in (503, 529):
        return "overloaded"
    if 500 <= code <= 599:
        return "server"
    return None


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds from a `Retry-After` header: an integer of seconds or an HTTP date (past is 0)."""
    if value is None:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    current = time.time() if now is None else now
    return max(0.0, when.timestamp() - current)


def error_summary(body: str) -> str:
    """The useful part of an error body: type, code and message when it is vendor JSON."""
    try:
        data = json.loads(body)
    except ValueError:
        return body
    error = data.get("error") if isinstance(data, dict) else None
    if not isinstance(error, dict):
        return body
    parts = [error.get("type"), error.get("code"), error.get("message")]
    summary = ": ".join(str(p) for p in parts if p not in (None, ""))
    return summary or body

"""Map HTTP failures to `ProviderError` kinds, as the original classifies them."""

from __future__ import annotations

import email.utils
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

    401/402/403 are `auth` (never retried); 429 `rate_limited`; 529 and 503 `overloaded`; other
    5xx `server`; a 400/413 naming the context window `context_overflow`; any other client error
    is `malformed` and not retried (the request itself was refused).
    """
    message = body.strip()[:500] or f"HTTP {status}"
    lowered = body.lower()
    if status in (401, 402, 403):
        return ProviderError("auth", message, status=status)
    if status == 429:
        return ProviderError("rate_limited", message, status=status, retry_after=retry_after)
    if status in (503, 529):
        return ProviderError("overloaded", message, status=status, retry_after=retry_after)
    if status >= 500:
        return ProviderError("server", message, status=status, retry_after=retry_after)
    if status in (400, 413) and any(marker in lowered for marker in _OVERFLOW_MARKERS):
        return ProviderError("context_overflow", message, status=status, retryable=False)
    return ProviderError("malformed", message, status=status, retryable=False)


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

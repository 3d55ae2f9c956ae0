"""The error tree. Messages are for people; the class and its fields are the contract."""

from __future__ import annotations


class IohError(Exception):
    """Base of every error ioh-tui raises on purpose."""


class ConfigError(IohError):
    """Bad input from the user: a contract, a scenario, an option. Nothing was started (exit 2)."""


class ResumeError(IohError):
    """A run cannot be resumed: unknown id, newer store format, changed workspace."""


class ConflictError(IohError):
    """Another live driver holds the run's lease."""

    def __init__(self, run_id: int, owner: str) -> None:
        super().__init__(f"run {run_id} is being driven by another process ({owner})")
        self.run_id = run_id
        self.owner = owner


class SandboxError(IohError):
    """The sandbox itself could not start a command (never a verification failure)."""


PROVIDER_ERROR_KINDS = (
    "auth",
    "rate_limited",
    "overloaded",
    "server",
    "transport",
    "timeout",
    "malformed",
    "context_overflow",
    "stream_error",
    "truncated",
)

_RETRYABLE = {
    "rate_limited",
    "overloaded",
    "server",
    "transport",
    "timeout",
    "malformed",
    "stream_error",
    "truncated",
}


class ProviderError(IohError):
    """A model call failed, after any retries.

    Attributes:
        kind: one of `PROVIDER_ERROR_KINDS`.
        status: the HTTP status when there was one.
        retry_after: seconds the server asked us to wait, when it said.
        retryable: whether another attempt could succeed (client errors never).
    """

    def __init__(
        self,
        kind: str,
        message: str,
        *,
        status: int | None = None,
        retry_after: float | None = None,
        retryable: bool | None = None,
    ) -> None:
        if kind not in PROVIDER_ERROR_KINDS:
            raise ValueError(f"unknown provider error kind {kind!r}")
        super().__init__(message)
        self.kind = kind
        self.status = status
        self.retry_after = retry_after
        self.retryable = kind in _RETRYABLE if retryable is None else retryable

    def __str__(self) -> str:
        status = f" (HTTP {self.status})" if self.status is not None else ""
        return f"{self.kind}{status}: {self.args[0]}"

"""The conversation model shared by the engine and every provider: requests in, completions out."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

Role = Literal["system", "user", "assistant", "tool"]

EFFORTS = ("low", "medium", "high")
"""The reasoning effort a model that reasons may be asked for, least first
(`providers.reasoning` says it in each wire's terms)."""


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One call the model asked for."""

    id: str
    """The provider's call id (minted when the wire has none)."""
    name: str
    arguments: Mapping[str, Any]
    """Parsed arguments; `{}` when the model sent an empty string."""
    arguments_error: str | None = None
    """The raw argument text when it did not parse as a JSON object (the model is told)."""


@dataclass(frozen=True, slots=True)
class Image:
    """An image shown to the model with a tool result (`view_image`, an MCP tool's image).

    The bytes are what is sent (already scaled to the provider's limits), kept whole so that a
    resumed run sends the same request whatever became of the file since.
    """

    media_type: str
    """`image/png`, `image/jpeg`, `image/gif` or `image/webp`."""
    data: bytes
    name: str
    """Where it came from: a workspace path, or `SERVER/TOOL` for an MCP result."""
    width: int
    height: int

    def describe(self) -> str:
        """`name (image/png, 12,345 bytes, 640x480)`: how the app and the notes show it."""
        return (
            f"{self.name} ({self.media_type}, {len(self.data):,} bytes, {self.width}x{self.height})"
        )


@dataclass(frozen=True, slots=True)
class Thought:
    """One block of the model's reasoning, kept to be sent back exactly as it came.

    Anthropic signs each thinking block, and with extended thinking on, a turn that called tools
    must come back with its blocks, signatures intact, or the next request is refused. A block
    the provider redacted keeps only its opaque `redacted` data.
    """

    text: str = ""
    signature: str = ""
    redacted: str = ""


@dataclass(frozen=True, slots=True)
class Message:
    """One message of the transcript.

    `tool_calls` is set on assistant messages that called tools; `tool_call_id` on the `tool`
    message that answers one of them, whose `images` the provider's wire sends with it.
    """

    role: Role
    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    images: tuple[Image, ...] = ()
    thoughts: tuple[Thought, ...] = ()
    """An assistant turn's signed reasoning blocks (sent back by the wires that take them)."""


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool offered to the model: its name, what it does, and a JSON Schema of its arguments."""

    name: str
    description: str
    parameters: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Request:
    """One completion request."""

    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...] = ()
    max_tokens: int = 8192
    model: str | None = None
    """Overrides the provider's model for this request."""


@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens a completion used, as the provider reported them."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0
    cost_usd: float | None = None
    """Cost when known (the provider said, or a price table knew the model); None otherwise."""

    @property
    def total_tokens(self) -> int:
        """Input plus output."""
        return self.input_tokens + self.output_tokens


@dataclass(frozen=True, slots=True)
class Completion:
    """What one model call produced, assembled from its stream."""

    text: str = ""
    thinking: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage | None = None
    """None when the provider reported nothing (not zero)."""
    stop_reason: str | None = None
    model: str | None = None
    ttft_ms: float | None = None
    """Time to the first streamed byte of content; None when not measured."""
    latency_ms: float | None = None
    thoughts: tuple[Thought, ...] = ()
    """The reasoning as signed blocks, when the wire signs it (Anthropic); `thinking` is the
    text of them all."""


@dataclass(frozen=True, slots=True)
class TextPiece:
    """A fragment of the answer's text, as it streams."""

    text: str


@dataclass(frozen=True, slots=True)
class ThinkingPiece:
    """A fragment of the model's reasoning, as it streams."""

    text: str


@dataclass(frozen=True, slots=True)
class ToolCallPiece:
    """A fragment of a tool call: the name arrives once, arguments in pieces."""

    index: int
    id: str | None = None
    name: str | None = None
    arguments: str = ""


StreamPiece = TextPiece | ThinkingPiece | ToolCallPiece
StreamSink = Callable[[StreamPiece], None]


@dataclass(frozen=True, slots=True)
class Attempt:
    """One try at a completion, for the accounting table (one row per attempt)."""

    attempt: int
    """1 for the first try."""
    provider: str
    model: str | None
    latency_ms: float
    ttft_ms: float | None = None
    usage: Usage | None = None
    stop_reason: str | None = None
    failure: str | None = None
    """Short kind of the failure, e.g. `rate_limited (HTTP 429)`; None when it succeeded."""
    retry_in_s: float | None = None
    """The wait before the next attempt, when there is one."""
    extra: Mapping[str, Any] = field(default_factory=dict)


AttemptSink = Callable[[Attempt], None]

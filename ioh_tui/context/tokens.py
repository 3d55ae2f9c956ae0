"""How many tokens a request will use, before it is sent.

No tokenizer ships for every model, so the count starts from an estimate (four characters a token,
as the original harness counts) and is calibrated by what the provider reported for the previous
request: when the new request extends the previous one, the count is the reported figure plus an
estimate of what was added; otherwise the estimate is scaled by the ratio the last report showed.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass

from ioh_tui.core.transcript import Message, ToolSpec

CHARS_PER_TOKEN = 4
PER_MESSAGE = 4
"""A message's framing (role, separators) in tokens, roughly as the chat wires count it."""
IMAGE_TOKENS = 1_600
"""What one image is counted as, whatever its size: Anthropic bills width x height / 750, about
1,600 at its 1.15 megapixel cap (a larger image is scaled down to it), and OpenAI's high-detail
tiles come to at most about 1,100 in a 2048 px square (`tools/vision.py` sizes images to these)."""


def estimate_text(text: str) -> int:
    """Tokens of `text` by the four-characters rule."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def estimate_message(message: Message) -> int:
    """Tokens of one message: its text, tool calls, images, framing and signed reasoning.

    The reasoning goes back with the turn (`Message.thoughts`) and is counted as input.
    """
    calls = sum(
        estimate_text(c.name) + estimate_text(json.dumps(dict(c.arguments), sort_keys=True))
        for c in message.tool_calls
    )
    images = IMAGE_TOKENS * len(message.images)
    thoughts = sum(estimate_text(t.text) + estimate_text(t.redacted) for t in message.thoughts)
    return PER_MESSAGE + estimate_text(message.content) + calls + images + thoughts


def estimate(messages: Sequence[Message], tools: Sequence[ToolSpec] = ()) -> int:
    """Tokens of a request's messages and tool definitions, uncalibrated."""
    specs = sum(
        estimate_text(t.name + t.description + json.dumps(dict(t.parameters), sort_keys=True))
        for t in tools
    )
    return sum(estimate_message(m) for m in messages) + specs


@dataclass(slots=True)
class Gauge:
    """Counts a request's tokens, calibrated by the provider's reports on earlier requests."""

    ratio: float = 1.0
    """Reported over estimated, from the last report (1.0 before any)."""
    _last: tuple[Message, ...] = ()
    _reported: int | None = None
    _estimated: int = 0
    """The estimate of `_last` (kept so that a growing transcript is estimated once)."""

    def count(self, messages: Sequence[Message], tools: Sequence[ToolSpec] = ()) -> int:
        """The tokens `messages` (with `tools`) will use."""
        last = self._last
        if self._reported is not None and len(messages) >= len(last) and _extends(messages, last):
            return self._reported + math.ceil(self.ratio * estimate(messages[len(last) :]))
        return math.ceil(self.ratio * estimate(messages, tools))

    def observe(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], input_tokens: int
    ) -> None:
        """Take the provider's report of the input tokens `messages` used."""
        if input_tokens <= 0:
            return  # a provider that reports nothing teaches nothing
        last = self._last
        if self._estimated and len(messages) >= len(last) and _extends(messages, last):
            estimated = self._estimated + estimate(messages[len(last) :])
        else:
            estimated = estimate(messages, tools)
        if estimated > 0:
            # Bounded: one odd report (a cache accounting quirk) must not blind the count.
            self.ratio = min(4.0, max(0.25, input_tokens / estimated))
        self._last = tuple(messages)
        self._reported = input_tokens
        self._estimated = estimated


def _extends(messages: Sequence[Message], prefix: tuple[Message, ...]) -> bool:
    """Whether `messages` starts with `prefix` (the caller has checked it is no longer).

    Tuple equality runs in C and tries `is` before `==` for each pair: a transcript's messages
    are the same objects turn after turn, so each costs a pointer comparison, not a Python call
    (a 1,000-step run made two million generator steps here, docs/performance.md).
    """
    return tuple(messages[: len(prefix)]) == prefix

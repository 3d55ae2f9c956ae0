"""Extended thinking as Anthropic checks it, for the fake server's Anthropic wire.

With `thinking` on, the API refuses a request whose budget is out of range, whose thinking
blocks do not carry the signature they were sent with, or whose last assistant turn called
tools without the thinking that came before the calls. The fake refuses the same requests, so a
harness that loses a turn's signed thinking (in its transcript, its store or a resume) fails
against it as it would against the real API.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from typing import Any

from ioh_tui.providers.testing.scenario import Scenario

MIN_BUDGET = 1024


def fake_signature(thinking: str) -> str:
    """The signature the fake gives a turn's thinking block."""
    return f"fake-sig-{hashlib.sha256(thinking.encode()).hexdigest()[:32]}"


def thinking_problem(body: Mapping[str, Any], scenario: Scenario, served: int) -> str | None:
    """Why the API would refuse `body` for its thinking (None: it would not).

    `served` is how many of the scenario's turns the transcript holds: the last assistant turn
    is the scenario's turn `served - 1`.
    """
    thinking = body.get("thinking")
    if not isinstance(thinking, dict) or thinking.get("type") != "enabled":
        return None
    budget = thinking.get("budget_tokens")
    limit = body.get("max_tokens")
    if not isinstance(budget, int) or budget < MIN_BUDGET:
        return f"thinking.budget_tokens: Input should be greater than or equal to {MIN_BUDGET}"
    if not isinstance(limit, int) or budget >= limit:
        return "`max_tokens` must be greater than `thinking.budget_tokens`"
    assistants = [m for m in _dicts(body.get("messages")) if m.get("role") == "assistant"]
    for message in assistants:
        for block in _blocks(message):
            text, signature = block.get("thinking"), block.get("signature")
            if block.get("type") == "thinking" and signature != fake_signature(str(text)):
                return "messages: Invalid `signature` in `thinking` block"
    if not assistants or not 0 < served <= len(scenario.turns):
        return None
    last = _blocks(assistants[-1])
    called = any(b.get("type") == "tool_use" for b in last)
    thought = bool(last) and last[0].get("type") in ("thinking", "redacted_thinking")
    if called and scenario.turns[served - 1].thinking and not thought:
        return (
            "messages: Expected `thinking` or `redacted_thinking`, but found `tool_use`. When "
            "`thinking` is enabled, a final `assistant` message must start with a thinking block"
        )
    return None


def _blocks(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    return list(_dicts(content)) if isinstance(content, list) else []


def _dicts(value: Any) -> Iterable[dict[str, Any]]:
    return (v for v in value if isinstance(v, dict)) if isinstance(value, list) else ()

"""How hard the model thinks: one effort setting, said in each wire's own terms.

OpenAI (and compatible servers) take `reasoning_effort`, OpenRouter `reasoning.effort`, and
Anthropic a thinking budget in tokens (extended thinking); the budgets are Anthropic's own
guidance for the three levels: the minimum is 1,024, and past about 32,000 a budget is rarely
used whole.
"""

from __future__ import annotations

from ioh_tui.core.errors import ConfigError
from ioh_tui.core.transcript import EFFORTS

THINKING_BUDGETS = {"low": 2048, "medium": 8192, "high": 24576}
"""Anthropic's `budget_tokens` for each effort (added to the answer's own `max_tokens`)."""


def checked_effort(effort: str | None) -> str | None:
    """`effort` when it is one of `EFFORTS` (None: the provider's default).

    Raises:
        ConfigError: any other value (one line naming the levels).
    """
    if effort is None or effort in EFFORTS:
        return effort
    raise ConfigError(f"reasoning effort {effort!r}: choose from {', '.join(EFFORTS)}")

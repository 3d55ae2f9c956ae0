"""The context windows of the common models (tokens), and the one a run works within.

The table is matched on the longest prefix of the model name, after any `vendor/` prefix an
aggregator adds (`anthropic/claude-sonnet-4` is `claude-sonnet-4`). A model the table does not know
gets `DEFAULT_WINDOW`, small on purpose: a run that trims too early costs a little context, one
that trims too late dies on `context_overflow`. `--context-window` overrides both.
"""

from __future__ import annotations

DEFAULT_WINDOW = 32_768
"""For a model the table does not know (a local server's, most often)."""

KNOWN: dict[str, int] = {
    "claude-opus-4": 200_000,
    "claude-sonnet-4": 200_000,
    "claude-haiku-4": 200_000,
    "claude-3-7-sonnet": 200_000,
    "claude-3-5": 200_000,
    "claude-3": 200_000,
    "gpt-5": 400_000,
    "gpt-4.1": 1_047_576,
    "gpt-4o": 128_000,
    "gpt-4-turbo": 128_000,
    "o4-mini": 200_000,
    "o3": 200_000,
    "o1": 200_000,
    "gemini-2.5": 1_048_576,
    "gemini-2.0": 1_048_576,
    "deepseek-chat": 64_000,
    "deepseek-reasoner": 64_000,
    "llama-3.1": 131_072,
    "llama-3.3": 131_072,
    "qwen3": 131_072,
    "qwen2.5": 32_768,
    "mistral-large": 131_072,
}


def window_for(model: str | None, override: int | None = None) -> int:
    """The window a run of `model` works within: the override, the table, or the default."""
    if override is not None:
        return override
    name = (model or "").rsplit("/", 1)[-1].lower()
    matches = [prefix for prefix in KNOWN if name.startswith(prefix)]
    return KNOWN[max(matches, key=len)] if matches else DEFAULT_WINDOW

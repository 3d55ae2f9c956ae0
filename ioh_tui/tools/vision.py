"""Which models take images, and the size an image may be for each provider.

A model is taken to accept images only when the table knows it does (`ACCEPTS`, glob patterns on
the model name after any `vendor/` prefix an aggregator adds); a model it does not know is
text-only, so nothing is sent that a text model would refuse. `IOH_TUI_VISION` (`1` or `0`)
overrides the table for a model it gets wrong.

The limits are each API's documented ones, with the longest side where the model stops gaining:

- Anthropic: 1568 px on the longest side (larger images are scaled down by the API, at the
  same token cost) and 3.75 MB of image (the API's 5 MB is of base64 text, four characters for
  every three bytes).
- OpenAI: 2048 px (the API fits a high-detail image in a 2048 px square) and 20 MB.
- OpenRouter, OpenAI-compatible servers and anything else: Anthropic's, the strictest, as the
  request may be routed to any model behind them.
"""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass
from typing import Protocol

ACCEPTS = (
    "claude-*",
    "gpt-4o*",
    "gpt-4.1*",
    "gpt-4.5*",
    "gpt-4-turbo*",
    "gpt-5*",
    "chatgpt-4o*",
    "o1",
    "o1-20*",
    "o3",
    "o3-20*",
    "o3-pro*",
    "o4-mini*",
    "gemini-*",
    "llava*",
    "*-vl*",
    "pixtral*",
    "llama-4*",
)
"""Models that accept images (patterns on the lower-cased name)."""
TEXT_ONLY = ("claude-2*", "claude-instant*", "*-mini-tts*", "*-audio*", "*-search*")
"""Exceptions to `ACCEPTS`: matched first."""
OVERRIDE_ENV = "IOH_TUI_VISION"


@dataclass(frozen=True, slots=True)
class Vision:
    """A model takes images, within these limits."""

    max_side: int
    """Pixels on the longest side."""
    max_bytes: int
    """Bytes of one image (before base64)."""
    provider: str
    """Whose limits these are (named in observations)."""

    def describe(self) -> str:
        """`1568 px, 3,750,000 bytes (anthropic)`."""
        return f"{self.max_side} px, {self.max_bytes:,} bytes ({self.provider})"


ANTHROPIC = Vision(1568, 3_750_000, "anthropic")
OPENAI = Vision(2048, 20_000_000, "openai")
LIMITS = {"anthropic": ANTHROPIC, "openai": OPENAI}


class Named(Protocol):
    """What is read of a provider: its name and model."""

    @property
    def name(self) -> str:
        """The provider's name."""
        ...

    @property
    def model(self) -> str | None:
        """The model slug."""
        ...


def accepts_images(model: str | None) -> bool:
    """Whether `model` is known to accept images (`IOH_TUI_VISION` overrides the table)."""
    said = os.environ.get(OVERRIDE_ENV, "").strip().lower()
    if said in ("1", "true", "yes", "on"):
        return True
    if said in ("0", "false", "no", "off"):
        return False
    name = (model or "").rsplit("/", 1)[-1].lower()
    if not name or any(fnmatch.fnmatchcase(name, p) for p in TEXT_ONLY):
        return False
    return any(fnmatch.fnmatchcase(name, p) for p in ACCEPTS)


def vision_of(provider: Named) -> Vision | None:
    """The limits images sent through `provider` keep to; None when its model takes none.

    A fallback chain (`providers` holds its links) takes images only if every link does, within
    the strictest limits of them all: the request may be sent to any of them.
    """
    links: tuple[Named, ...] = tuple(getattr(provider, "providers", ())) or (provider,)
    found = []
    for link in links:
        if not accepts_images(link.model):
            return None
        found.append(LIMITS.get(link.name, ANTHROPIC))
    return min(found, key=lambda v: (v.max_side, v.max_bytes))

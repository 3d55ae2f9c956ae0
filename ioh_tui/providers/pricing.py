"""Prices per model, for costing calls whose provider does not report a cost.

A price is USD per million tokens: fresh input, output, cache reads, cache writes. Input tokens
in `Usage` are the whole prompt, so the fresh part is input minus cache reads and writes. An
unknown model has no cost (`None`), never a cost of zero.

The built-in table is small and dated (`BUILTIN_AS_OF`); a user extends or overrides it from a
TOML file::

    as_of = "2026-01-15"

    [models."my-local-model"]
    input = 0.0
    output = 0.0

    [models."gpt-4o"]
    input = 2.5
    output = 10.0
    cache_read = 1.25
"""

from __future__ import annotations

import math
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ioh_tui.core.errors import ConfigError
from ioh_tui.core.transcript import Usage

_DATE_SUFFIX = re.compile(r"-(\d{8}|\d{4}-\d{2}-\d{2})$")
_PRICE_KEYS = ("input", "output", "cache_read", "cache_write")


@dataclass(frozen=True, slots=True)
class Price:
    """USD per million tokens."""

    input: float
    output: float
    cache_read: float = 0.0
    """Tokens read from the prompt cache (billed instead of `input`)."""
    cache_write: float = 0.0
    """Tokens written to the prompt cache (billed instead of `input`)."""


@dataclass(frozen=True, slots=True)
class PriceTable:
    """Prices by model slug."""

    prices: Mapping[str, Price] = field(default_factory=dict)
    as_of: str | None = None
    """When the prices were read off the vendors' pages."""

    def price_for(self, model: str | None) -> Price | None:
        """The price of `model`: exact slug, then without a `vendor/` prefix or a date suffix."""
        if not model:
            return None
        candidates = [model]
        if "/" in model:
            candidates.append(model.split("/", 1)[1])
        candidates += [_DATE_SUFFIX.sub("", c) for c in list(candidates)]
        for candidate in candidates:
            price = self.prices.get(candidate)
            if price is not None:
                return price
        return None

    def cost(self, model: str | None, usage: Usage) -> float | None:
        """USD for one call, or None when the model has no price."""
        price = self.price_for(model)
        if price is None:
            return None
        cached = usage.cache_read_tokens + usage.cache_write_tokens
        fresh = max(0, usage.input_tokens - cached)
        total = (
            fresh * price.input
            + usage.output_tokens * price.output
            + usage.cache_read_tokens * price.cache_read
            + usage.cache_write_tokens * price.cache_write
        )
        return total / 1_000_000

    def extended(self, other: PriceTable) -> PriceTable:
        """This table with `other`'s prices added (they win on a clash)."""
        return PriceTable({**self.prices, **other.prices}, other.as_of or self.as_of)

    @classmethod
    def from_toml(cls, text: str, *, where: str = "price table") -> PriceTable:
        """Parse a TOML price table; `ConfigError` naming what is wrong."""
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{where} is not valid TOML: {exc}") from None
        as_of = data.get("as_of")
        if as_of is not None and not isinstance(as_of, str):
            raise ConfigError(f"{where}: as_of must be a string")
        models = data.get("models", {})
        if not isinstance(models, dict):
            raise ConfigError(f"{where}: models must be a table")
        return cls(
            {name: _price(raw, f"{where}: models.{name}") for name, raw in models.items()}, as_of
        )

    @classmethod
    def load(cls, path: str | Path) -> PriceTable:
        """Read a TOML price table from a file."""
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"cannot read price table {path}: {exc.strerror or exc}") from None
        return cls.from_toml(text, where=str(path))

    @classmethod
    def builtin(cls) -> PriceTable:
        """The small table shipped with ioh-tui (see `BUILTIN_AS_OF`)."""
        return cls(_BUILTIN, BUILTIN_AS_OF)


def _price(raw: object, where: str) -> Price:
    if not isinstance(raw, dict):
        raise ConfigError(f"{where} must be a table")
    unknown = sorted(set(raw) - set(_PRICE_KEYS))
    if unknown:
        raise ConfigError(
            f"{where}: unknown key {unknown[0]!r} (allowed: {', '.join(_PRICE_KEYS)})"
        )
    values: dict[str, float] = {}
    for key in _PRICE_KEYS:
        value = raw.get(key, 0.0)
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            raise ConfigError(f"{where}: {key} must be a number >= 0")
        if not math.isfinite(value):
            raise ConfigError(f"{where}: {key} must be finite")
        values[key] = float(value)
    if "input" not in raw or "output" not in raw:
        raise ConfigError(f"{where}: input and output prices are required")
    return Price(**values)


BUILTIN_AS_OF = "2025-06-01"
"""When the built-in prices were taken from the vendors' public price pages."""

_BUILTIN: dict[str, Price] = {
    "gpt-4o": Price(2.50, 10.00, cache_read=1.25),
    "gpt-4o-mini": Price(0.15, 0.60, cache_read=0.075),
    "gpt-4.1": Price(2.00, 8.00, cache_read=0.50),
    "gpt-4.1-mini": Price(0.40, 1.60, cache_read=0.10),
    "gpt-4.1-nano": Price(0.10, 0.40, cache_read=0.025),
    "o3-mini": Price(1.10, 4.40, cache_read=0.55),
    "claude-3-5-haiku": Price(0.80, 4.00, cache_read=0.08, cache_write=1.00),
    "claude-3-5-sonnet": Price(3.00, 15.00, cache_read=0.30, cache_write=3.75),
    "claude-3-7-sonnet": Price(3.00, 15.00, cache_read=0.30, cache_write=3.75),
    "claude-sonnet-4": Price(3.00, 15.00, cache_read=0.30, cache_write=3.75),
    "claude-opus-4": Price(15.00, 75.00, cache_read=1.50, cache_write=18.75),
}

"""Provider names to providers; re-exports the kill switch, which lives in `providers.base`.

`registry.ALLOW_REMOTE` reads and writes `base.ALLOW_REMOTE` (this module's class forwards the
attribute), so setting the switch through either name turns remote calls off: a copy of the bool
here would be a switch that silently does nothing.
"""

from __future__ import annotations

import sys
import types
from pathlib import Path

from ioh_tui.core.errors import ConfigError
from ioh_tui.providers import base
from ioh_tui.providers.anthropic_provider import Anthropic
from ioh_tui.providers.base import Provider, ensure_allowed, is_loopback
from ioh_tui.providers.openai_provider import Compatible, OpenAI, OpenRouter
from ioh_tui.providers.pricing import PriceTable
from ioh_tui.providers.testing.scenario import Scenario
from ioh_tui.providers.testing.scripted import ScriptedProvider

ALLOW_REMOTE: bool
"""`providers.base.ALLOW_REMOTE`, read and written through this name too (see `_Registry`)."""

PROVIDER_NAMES = ("openrouter", "anthropic", "openai", "compatible", "scripted")


_WIRES: dict[str, type[OpenRouter | Anthropic | OpenAI | Compatible]] = {
    "openrouter": OpenRouter,
    "anthropic": Anthropic,
    "openai": OpenAI,
    "compatible": Compatible,
}
"""The providers that speak a wire, by name."""


def make_provider(
    name: str,
    *,
    model: str | None = None,
    base_url: str | None = None,
    api_key: str | None = None,
    scenario: str | Path | Scenario | None = None,
    max_retries: int = 2,
    prices: PriceTable | None = None,
    reasoning: str | None = None,
) -> Provider:
    """The provider called `name`, configured from the arguments and the environment.

    `api_key` (read by the caller from the variable `api_key_env` names) replaces the provider's
    own variable; `prices` replaces the shipped price table (None: the shipped one); `reasoning`
    is the effort asked of a model that reasons (`reasoning.EFFORTS`; the scripted model's
    thinking is its scenario's).

    Raises:
        ConfigError: unknown name, a missing key or model, or `scripted` without a scenario.
    """
    wire = _WIRES.get(name)
    if wire is not None:
        return wire(
            base_url=base_url,
            api_key=api_key,
            model=model,
            max_retries=max_retries,
            prices=prices,
            reasoning=reasoning,
        )
    if name == "scripted":
        if scenario is None:
            raise ConfigError("the scripted provider needs a scenario (--scenario FILE)")
        return ScriptedProvider(scenario, max_retries=max_retries)
    raise ConfigError(f"unknown provider {name!r} (choose from {', '.join(PROVIDER_NAMES)})")


class _Registry(types.ModuleType):
    """This module, with `ALLOW_REMOTE` forwarded to the one switch in `providers.base`."""

    @property
    def ALLOW_REMOTE(self) -> bool:
        """`providers.base.ALLOW_REMOTE`."""
        return base.ALLOW_REMOTE

    @ALLOW_REMOTE.setter
    def ALLOW_REMOTE(self, value: bool) -> None:
        base.ALLOW_REMOTE = value


sys.modules[__name__].__class__ = _Registry
__all__ = ["ALLOW_REMOTE", "PROVIDER_NAMES", "ensure_allowed", "is_loopback", "make_provider"]

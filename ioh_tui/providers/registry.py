"""Provider names to providers, and the `ALLOW_REMOTE` kill switch.

`ALLOW_REMOTE` is read at every request, so a test suite that sets it to False before anything
runs is sure no request leaves the machine: a provider whose endpoint is not a loopback address
fails with a non-retryable `transport` error before it opens a connection.
"""

from __future__ import annotations

import ipaddress
from pathlib import Path

import httpx

from ioh_tui.core.errors import ConfigError, ProviderError
from ioh_tui.providers.anthropic_provider import Anthropic
from ioh_tui.providers.base import Provider
from ioh_tui.providers.openai_provider import Compatible, OpenAI, OpenRouter
from ioh_tui.providers.scenario import Scenario
from ioh_tui.providers.scripted import ScriptedProvider

ALLOW_REMOTE: bool = True
"""When False, only loopback endpoints may be called (tests turn it off)."""

PROVIDER_NAMES = ("openrouter", "anthropic", "openai", "compatible", "scripted")


def is_loopback(url: str) -> bool:
    """Whether `url` points at this machine (`localhost`, 127.0.0.0/8 or ::1)."""
    try:
        host = httpx.URL(url).host
    except httpx.InvalidURL:
        return False
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def ensure_allowed(url: str) -> None:
    """Raise a non-retryable `transport` error for a remote URL while `ALLOW_REMOTE` is off."""
    if not ALLOW_REMOTE and not is_loopback(url):
        raise ProviderError(
            "transport",
            f"remote endpoint {url} refused: remote calls are off (registry.ALLOW_REMOTE)",
            retryable=False,
        )


def make_provider(
    name: str,
    *,
    model: str | None = None,
    base_url: str | None = None,
    api_key: str | None = None,
    scenario: str | Path | Scenario | None = None,
    max_retries: int = 2,
) -> Provider:
    """The provider called `name`, configured from the arguments and the environment.

    Raises:
        ConfigError: unknown name, a missing key or model, or `scripted` without a scenario.
    """
    if name == "openrouter":
        return OpenRouter(base_url=base_url, api_key=api_key, model=model, max_retries=max_retries)
    if name == "anthropic":
        return Anthropic(base_url=base_url, api_key=api_key, model=model, max_retries=max_retries)
    if name == "openai":
        return OpenAI(base_url=base_url, api_key=api_key, model=model, max_retries=max_retries)
    if name == "compatible":
        return Compatible(base_url=base_url, api_key=api_key, model=model, max_retries=max_retries)
    if name == "scripted":
        if scenario is None:
            raise ConfigError("the scripted provider needs a scenario (--scenario FILE)")
        return ScriptedProvider(scenario, max_retries=max_retries)
    raise ConfigError(f"unknown provider {name!r} (choose from {', '.join(PROVIDER_NAMES)})")

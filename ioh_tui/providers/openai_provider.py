"""The OpenAI-wire providers: OpenAI, OpenRouter, and any compatible server (with local presets).

Keys and models come from the arguments or the environment, exactly as the original reads them;
no default model is guessed and a missing one is a `ConfigError` naming the variable.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping
from typing import Any

import httpx

from ioh_tui.core.errors import ConfigError
from ioh_tui.core.transcript import Request, StreamSink
from ioh_tui.providers.http import (
    DEFAULT_STALL_TIMEOUT_S,
    DEFAULT_TIMEOUT_S,
    StreamAssembler,
    WireProvider,
    check_base_url,
    from_env,
    require,
)
from ioh_tui.providers.openai_wire import Flavour, OpenAIAssembler, build_body
from ioh_tui.providers.pricing import PriceTable
from ioh_tui.providers.retry import RetryPolicy, Sleep
from ioh_tui.providers.sse import ServerSentEvent
from ioh_tui.providers.whole import openai_events

OPENAI_BASE_URL = "https://api.openai.com/v1"
OPENROUTER_BASE_URL = "https://openrouter.ai/api/v1"

COMPATIBLE_PRESETS: Mapping[str, str] = {
    "ollama": "http://localhost:11434/v1",
    "vllm": "http://localhost:8000/v1",
    "llamacpp": "http://localhost:8080/v1",
    "lmstudio": "http://localhost:1234/v1",
}
"""Local servers by name; they take no key, so none is sent."""


class _OpenAIWire(WireProvider):
    _flavour: Flavour = "openai"

    def build_body(self, request: Request, model: str) -> dict[str, Any]:
        """The chat-completions body in this provider's flavour."""
        return build_body(request, model, flavour=self._flavour, effort=self.reasoning)

    def whole_events(self, whole: Any) -> list[ServerSentEvent] | None:
        """A `chat.completion` object as its chunk (a server that ignored `stream`)."""
        return openai_events(whole)

    def headers(self, key: str | None) -> dict[str, str]:
        """Bearer auth, or nothing when there is no key."""
        return {"authorization": f"Bearer {key}"} if key else {}

    def assembler(
        self, on_piece: StreamSink | None, used_ids: Iterable[str], started: float
    ) -> StreamAssembler:
        """An OpenAI-wire assembler."""
        return OpenAIAssembler(on_piece, used_ids=used_ids, started=started)


class _Hosted(_OpenAIWire):
    """A hosted OpenAI-wire service: a fixed base URL, a key and a model from its variables."""

    _name: str
    _key_var: str
    _model_var: str
    _base_url: str

    def __init__(
        self,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        model: str | None = None,
        max_retries: int = 2,
        client: httpx.AsyncClient | None = None,
        timeout: float | None = DEFAULT_TIMEOUT_S,
        stall_timeout_s: float = DEFAULT_STALL_TIMEOUT_S,
        prices: PriceTable | None = None,
        retry: RetryPolicy | None = None,
        sleep: Sleep = asyncio.sleep,
        reasoning: str | None = None,
    ) -> None:
        key = require(api_key, self._key_var)
        base = check_base_url(base_url or self._base_url)
        super().__init__(
            name=self._name,
            endpoint=f"{base}/chat/completions",
            model=require(model, self._model_var),
            api_key=key,
            max_retries=max_retries,
            client=client,
            timeout=timeout,
            stall_timeout_s=stall_timeout_s,
            prices=prices,
            retry=retry,
            sleep=sleep,
            reasoning=reasoning,
        )


class OpenAI(_Hosted):
    """OpenAI's Chat Completions API (`OPENAI_API_KEY`, `OPENAI_MODEL`)."""

    _name = "openai"
    _key_var = "OPENAI_API_KEY"
    _model_var = "OPENAI_MODEL"
    _base_url = OPENAI_BASE_URL


class OpenRouter(_Hosted):
    """OpenRouter's OpenAI-compatible API (`OPENROUTER_API_KEY`, `OPENROUTER_MODEL`).

    OpenRouter reports each call's cost in its usage chunk; that figure is used as is.
    """

    _flavour: Flavour = "openrouter"
    _name = "openrouter"
    _key_var = "OPENROUTER_API_KEY"
    _model_var = "OPENROUTER_MODEL"
    _base_url = OPENROUTER_BASE_URL


class Compatible(_OpenAIWire):
    """Any server speaking the OpenAI wire: `base_url` (or `OPENAI_BASE_URL`) and a model.

    `base_url` may also name a preset (`ollama`, `vllm`, `llamacpp`, `lmstudio`). The key is
    optional: `api_key`, or `OPENAI_API_KEY` only when the base URL also came from the
    environment (the pair the official SDK reads together), so an OpenAI key is never sent to a
    server named on the command line. Without a key no auth header is sent.
    """

    def __init__(
        self,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        model: str | None = None,
        max_retries: int = 2,
        client: httpx.AsyncClient | None = None,
        timeout: float | None = DEFAULT_TIMEOUT_S,
        stall_timeout_s: float = DEFAULT_STALL_TIMEOUT_S,
        prices: PriceTable | None = None,
        retry: RetryPolicy | None = None,
        sleep: Sleep = asyncio.sleep,
        name: str | None = None,
        reasoning: str | None = None,
    ) -> None:
        label = name or "compatible"
        if base_url is not None and base_url in COMPATIBLE_PRESETS:
            label = name or base_url
            base = COMPATIBLE_PRESETS[base_url]
        elif base_url is not None:
            base = base_url
        else:
            from_environment = from_env("OPENAI_BASE_URL")
            if from_environment is None:
                raise ConfigError("OPENAI_BASE_URL is not set (compatible needs --base-url)")
            base = from_environment
            api_key = api_key or from_env("OPENAI_API_KEY")
        super().__init__(
            name=label,
            endpoint=f"{check_base_url(base)}/chat/completions",
            model=require(model, "OPENAI_MODEL"),
            api_key=api_key,
            max_retries=max_retries,
            client=client,
            timeout=timeout,
            stall_timeout_s=stall_timeout_s,
            prices=prices,
            retry=retry,
            sleep=sleep,
            reasoning=reasoning,
        )

    @classmethod
    def preset(cls, preset: str, *, model: str | None = None, **options: Any) -> Compatible:
        """A local server by preset name, e.g. `Compatible.preset("ollama", model="qwen3")`."""
        if preset not in COMPATIBLE_PRESETS:
            raise ConfigError(
                f"unknown compatible preset {preset!r} (known: {', '.join(COMPATIBLE_PRESETS)})"
            )
        return cls(base_url=preset, model=model, **options)

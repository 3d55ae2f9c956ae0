"""Provider construction from arguments and environment, the registry, the kill switch, secrecy."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from ioh_tui.core.errors import ConfigError, ProviderError
from ioh_tui.core.transcript import Attempt, Message, Request
from ioh_tui.providers import (
    Anthropic,
    Compatible,
    OpenAI,
    OpenRouter,
    ScriptedProvider,
    base,
    make_provider,
    registry,
)
from ioh_tui.providers.pricing import Price, PriceTable

ENV = (
    "OPENAI_API_KEY",
    "OPENAI_MODEL",
    "OPENAI_BASE_URL",
    "OPENROUTER_API_KEY",
    "OPENROUTER_MODEL",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_MODEL",
)
KEY = "sk-test-0123456789abcdef"
REQUEST = Request(messages=(Message("user", "hi"),))
DONE_STREAM = (
    b'data: {"model": "gpt-4o", "choices": [{"index": 0, "delta": {"content": "ok"}}]}\n\n'
    b'data: {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}\n\n'
    b'data: {"choices": [], "usage": {"prompt_tokens": 1000000, "completion_tokens": 100000}}\n\n'
    b"data: [DONE]\n\n"
)


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    # The suite guard does this too; these tests depend on it, so they say so themselves.
    for name in ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(registry, "ALLOW_REMOTE", False)


def mock_client(
    handler: httpx.MockTransport | None = None, seen: list[httpx.Request] | None = None
) -> httpx.AsyncClient:
    def reply(request: httpx.Request) -> httpx.Response:
        if seen is not None:
            seen.append(request)
        return httpx.Response(200, content=DONE_STREAM)

    return httpx.AsyncClient(transport=handler or httpx.MockTransport(reply))


@pytest.mark.parametrize(
    ("cls", "key_var", "model_var"),
    [
        (OpenAI, "OPENAI_API_KEY", "OPENAI_MODEL"),
        (OpenRouter, "OPENROUTER_API_KEY", "OPENROUTER_MODEL"),
        (Anthropic, "ANTHROPIC_API_KEY", "ANTHROPIC_MODEL"),
    ],
)
def test_keys_and_models_come_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
    cls: type[OpenAI | OpenRouter | Anthropic],
    key_var: str,
    model_var: str,
) -> None:
    with pytest.raises(ConfigError, match=f"^{key_var} is not set$"):
        cls()
    monkeypatch.setenv(key_var, KEY)
    with pytest.raises(ConfigError, match=f"^{model_var} is not set$"):
        cls()
    monkeypatch.setenv(model_var, "env-model")
    assert cls().model == "env-model"
    assert cls(model="arg-model", api_key="k").model == "arg-model"


def test_endpoints_follow_the_reference() -> None:
    assert OpenAI(api_key="k", model="m").endpoint == "https://api.openai.com/v1/chat/completions"
    assert (
        OpenRouter(api_key="k", model="m").endpoint
        == "https://openrouter.ai/api/v1/chat/completions"
    )
    assert Anthropic(api_key="k", model="m").endpoint == "https://api.anthropic.com/v1/messages"
    assert Anthropic(api_key="k", model="m", base_url="http://127.0.0.1:9/v1/").endpoint == (
        "http://127.0.0.1:9/v1/messages"
    )


def test_compatible_presets_send_no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    ollama = Compatible.preset("ollama", model="qwen3")
    assert (ollama.name, ollama.endpoint) == (
        "ollama",
        "http://localhost:11434/v1/chat/completions",
    )
    assert ollama.headers(None) == {}
    expected = {"vllm": 8000, "llamacpp": 8080, "lmstudio": 1234}
    for preset, port in expected.items():
        provider = make_provider("compatible", base_url=preset, model="m")
        assert isinstance(provider, Compatible)
        assert provider.endpoint == f"http://localhost:{port}/v1/chat/completions"
    with pytest.raises(ConfigError, match="unknown compatible preset"):
        Compatible.preset("nope", model="m")


async def test_compatible_uses_env_key_only_with_env_base_url(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with pytest.raises(ConfigError, match="OPENAI_BASE_URL is not set"):
        Compatible(model="m")
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    seen: list[httpx.Request] = []
    explicit = Compatible(
        base_url="http://127.0.0.1:1/v1", model="m", client=mock_client(seen=seen)
    )
    await explicit.complete(REQUEST)
    assert "authorization" not in seen[-1].headers
    monkeypatch.setenv("OPENAI_BASE_URL", "http://localhost:2/v1")
    from_env = Compatible(model="m", client=mock_client(seen=seen))
    await from_env.complete(REQUEST)
    assert seen[-1].headers["authorization"] == f"Bearer {KEY}"
    assert str(seen[-1].url) == "http://localhost:2/v1/chat/completions"


async def test_wire_headers() -> None:
    seen: list[httpx.Request] = []
    anthropic = Anthropic(
        api_key=KEY,
        model="m",
        base_url="http://127.0.0.1:3",
        client=mock_client(seen=seen),
        max_retries=0,
    )
    with pytest.raises(ProviderError, match="not JSON"):
        await anthropic.complete(REQUEST)
    headers = seen[0].headers
    assert (headers["x-api-key"], headers["anthropic-version"]) == (KEY, "2023-06-01")
    assert "authorization" not in headers
    openai = OpenAI(
        api_key=KEY, model="m", base_url="http://127.0.0.1:3/v1", client=mock_client(seen=seen)
    )
    await openai.complete(REQUEST)
    assert seen[-1].headers["authorization"] == f"Bearer {KEY}"
    assert json.loads(seen[-1].content)["stream"] is True


def test_bad_base_url_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="not an http"):
        OpenAI(api_key="k", model="m", base_url="ftp://x")


def test_make_provider_names() -> None:
    with pytest.raises(ConfigError) as raised:
        make_provider("gemini")
    assert "openrouter, anthropic, openai, compatible, scripted" in str(raised.value)
    with pytest.raises(ConfigError, match="scenario"):
        make_provider("scripted")
    assert isinstance(make_provider("openai", api_key="k", model="m"), OpenAI)
    assert isinstance(make_provider("anthropic", api_key="k", model="m"), Anthropic)
    assert isinstance(
        make_provider("openrouter", api_key="k", model="m", max_retries=0), OpenRouter
    )


def test_make_provider_scripted(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"model": "demo", "turns": [{"text": "hi"}]}))
    provider = make_provider("scripted", scenario=path, max_retries=1)
    assert isinstance(provider, ScriptedProvider)
    assert provider.model == "demo"


@pytest.mark.parametrize(
    ("url", "loopback"),
    [
        ("http://127.0.0.1:8080/v1", True),
        ("http://127.9.9.9/v1", True),
        ("http://localhost:11434/v1", True),
        ("http://[::1]:8000/v1", True),
        ("https://api.openai.com/v1", False),
        ("http://10.0.0.1/v1", False),
        ("http://127.0.0.1.example.com/v1", False),
    ],
)
def test_is_loopback(url: str, loopback: bool) -> None:
    assert registry.is_loopback(url) is loopback


async def test_kill_switch_refuses_remote_before_any_request() -> None:
    seen: list[httpx.Request] = []
    attempts: list[Attempt] = []
    provider = OpenAI(api_key=KEY, model="m", client=mock_client(seen=seen))
    with pytest.raises(ProviderError, match="remote calls are off") as raised:
        await provider.complete(REQUEST, on_attempt=attempts.append)
    assert raised.value.kind == "transport"
    assert not raised.value.retryable
    assert seen == []
    assert len(attempts) == 1


def test_the_registry_name_sets_the_one_switch_in_base(monkeypatch: pytest.MonkeyPatch) -> None:
    for value in (True, False):
        monkeypatch.setattr(registry, "ALLOW_REMOTE", value)
        assert base.ALLOW_REMOTE is value
        assert registry.ALLOW_REMOTE is value
    with pytest.raises(ProviderError, match="remote calls are off"):
        registry.ensure_allowed("https://api.openai.com/v1")
    registry.ensure_allowed("http://127.0.0.1:9/v1")


async def test_key_never_shows_in_repr_or_errors() -> None:
    def leaky(request: httpx.Request) -> httpx.Response:
        body = {"error": {"type": "invalid_api_key", "message": f"Incorrect API key: {KEY}"}}
        return httpx.Response(401, json=body)

    client = httpx.AsyncClient(transport=httpx.MockTransport(leaky))
    provider = OpenAI(api_key=KEY, model="m", base_url="http://127.0.0.1:4/v1", client=client)
    attempts: list[Attempt] = []
    with pytest.raises(ProviderError) as raised:
        await provider.complete(REQUEST, on_attempt=attempts.append)
    assert raised.value.kind == "auth"
    assert "Incorrect API key: [redacted]" in str(raised.value)
    for text in (repr(provider), str(raised.value), repr(raised.value), repr(attempts)):
        assert KEY not in text
    assert KEY not in repr(vars(provider))


async def test_cost_comes_from_the_price_table_when_not_reported() -> None:
    prices = PriceTable({"gpt-4o": Price(input=2.0, output=10.0)})
    provider = OpenAI(
        api_key="k",
        model="gpt-4o-2024-08-06",
        base_url="http://127.0.0.1:5/v1",
        client=mock_client(),
        prices=prices,
    )
    completion = await provider.complete(REQUEST)
    assert completion.usage is not None
    assert completion.usage.cost_usd == pytest.approx(2.0 + 1.0)
    unpriced = OpenAI(
        api_key="k",
        model="mystery",
        base_url="http://127.0.0.1:5/v1",
        client=mock_client(),
        prices=PriceTable(),
    )
    completion = await unpriced.complete(REQUEST)
    assert completion.usage is not None
    assert completion.usage.cost_usd is None

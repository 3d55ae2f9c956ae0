"""Differential: the same OpenAI-wire bytes from a loopback server, to our client and to the SDK.

Both must agree on text, reasoning, tool calls with arguments, finish reason and usage (cost
included for OpenRouter), whatever the framing: chunked, close-delimited or sized bodies, in
small pieces, with LF or CRLF line ends. Where we are deliberately stricter than the SDK (a
stream without its terminator), the test says so.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from ioh_tui.core.errors import ProviderError
from ioh_tui.core.transcript import Completion, Message, Request, StreamPiece, TextPiece
from ioh_tui.providers import OpenAI, OpenRouter
from tests.integration.providers.wire_server import Reply, WireServer
from tests.integration.providers.wire_streams import (
    Json,
    chunk,
    frame,
    openai_events,
    openai_parallel_tools,
    openai_refusal,
    openai_text,
    openrouter_reasoning,
)

openai = pytest.importorskip("openai", reason="the openai SDK (test oracle) is not installed")
streaming = pytest.importorskip("openai.lib.streaming.chat")

REQUEST = Request(messages=(Message("user", "hi"),))

CASES: dict[str, list[Json]] = {
    "text": openai_text(["Hel", "lo, ", "world"]),
    "parallel_tools": openai_parallel_tools(),
    "refusal": openai_refusal(),
    "openrouter": openrouter_reasoning(),
    "multibyte": openai_text(["naïve ", "日本語 ", "😀"]),
}

TRANSPORTS: dict[str, dict[str, Any]] = {
    "chunked-whole": {"framing": "chunked"},
    "chunked-3-crlf": {"framing": "chunked", "piece": 3, "crlf": True},
    "close-5-crlf": {"framing": "close", "piece": 5, "crlf": True},
    "length-7": {"framing": "length", "piece": 7},
    "close-1": {"framing": "close", "piece": 1},
}


@pytest.fixture(scope="module")
def server() -> Iterator[WireServer]:
    with WireServer() as running:
        yield running


def reply(body: bytes, transport: dict[str, Any]) -> Reply:
    return Reply(body, framing=transport["framing"], piece=transport.get("piece", 0))


def serve_twice(server: WireServer, body: bytes, transport: dict[str, Any]) -> None:
    server.queue(reply(body, transport), reply(body, transport))


async def ours(
    server: WireServer, *, openrouter: bool = False
) -> tuple[Completion, list[StreamPiece]]:
    pieces: list[StreamPiece] = []
    cls = OpenRouter if openrouter else OpenAI
    provider = cls(base_url=f"{server.url}/v1", api_key="x", model="m", max_retries=0)
    try:
        return await provider.complete(REQUEST, on_piece=pieces.append), pieces
    finally:
        await provider.aclose()


def theirs(server: WireServer) -> Any:
    client = openai.OpenAI(base_url=f"{server.url}/v1", api_key="x", max_retries=0, timeout=10)
    state = streaming.ChatCompletionStreamState()
    with client:
        for sdk_chunk in client.chat.completions.create(
            model="m",
            messages=[{"role": "user", "content": "hi"}],
            stream=True,
            stream_options={"include_usage": True},
        ):
            state.handle_chunk(sdk_chunk)
    return state.get_final_completion()


def normalise_ours(completion: Completion) -> dict[str, Any]:
    usage = completion.usage
    assert usage is not None
    return {
        "text": completion.text,
        "thinking": completion.thinking,
        "calls": [(c.id, c.name, dict(c.arguments)) for c in completion.tool_calls],
        "stop": completion.stop_reason,
        "model": completion.model,
        "usage": (usage.input_tokens, usage.output_tokens, usage.cache_read_tokens),
        "cost": usage.cost_usd,
    }


def normalise_theirs(final: Any) -> dict[str, Any]:
    choice = final.choices[0]
    message = choice.message
    extra = message.model_extra or {}
    usage = final.usage
    details = usage.prompt_tokens_details
    # We stream a refusal as the answer text; the SDK keeps it in its own field.
    return {
        "text": (message.content or "") + (message.refusal or ""),
        "thinking": extra.get("reasoning") or "",
        "calls": [
            (c.id, c.function.name, json.loads(c.function.arguments or "{}"))
            for c in message.tool_calls or []
        ],
        "stop": choice.finish_reason,
        "model": final.model,
        "usage": (
            usage.prompt_tokens,
            usage.completion_tokens,
            details.cached_tokens if details else 0,
        ),
        "cost": (usage.model_extra or {}).get("cost"),
    }


@pytest.mark.parametrize("transport", TRANSPORTS.values(), ids=TRANSPORTS.keys())
@pytest.mark.parametrize("case", CASES.keys())
async def test_same_answer_as_the_sdk(
    server: WireServer, case: str, transport: dict[str, Any]
) -> None:
    openrouter = case == "openrouter"
    body = frame(
        openai_events(CASES[case]),
        crlf=transport.get("crlf", False),
        comments=2 if openrouter else 0,
    )
    serve_twice(server, body, transport)
    completion, pieces = await ours(server, openrouter=openrouter)
    expected = normalise_theirs(theirs(server))
    assert normalise_ours(completion) == expected
    assert "".join(p.text for p in pieces if isinstance(p, TextPiece)) == expected["text"]


async def test_json_padded_with_spaces(server: WireServer) -> None:
    events = [
        (name, data[:-1] + "      }") for name, data in openai_events(openai_parallel_tools())[:-1]
    ]
    body = frame([*events, (None, "[DONE]")])
    serve_twice(server, body, {"framing": "chunked", "piece": 4})
    completion, _ = await ours(server)
    assert normalise_ours(completion) == normalise_theirs(theirs(server))


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        ({"message": "Overloaded", "type": "overloaded_error"}, "overloaded"),
        ({"code": 400, "message": "Token limit reached"}, "stream_error"),
    ],
)
async def test_mid_stream_error_both_raise(server: WireServer, error: Json, kind: str) -> None:
    error_chunk = chunk({"content": ""}, error=dict(error))
    body = frame(openai_events([chunk({"content": "par"}), error_chunk]))
    serve_twice(server, body, {"framing": "chunked"})
    with pytest.raises(ProviderError) as raised:
        await ours(server)
    assert raised.value.kind == kind
    with pytest.raises(openai.APIError) as sdk_raised:
        theirs(server)
    assert sdk_raised.value.message == error["message"]
    assert error["message"] in str(raised.value)


@pytest.mark.parametrize(
    "events",
    [
        pytest.param(lambda e: e[:-1], id="no-done"),
        pytest.param(lambda e: e[:2], id="no-finish-no-done"),
    ],
)
async def test_stricter_than_the_sdk_on_truncation(server: WireServer, events: Any) -> None:
    """Deliberate divergence: the SDK returns a partial answer, we report `truncated`."""
    body = frame(events(openai_events(openai_text(["a", "b"]))))
    serve_twice(server, body, {"framing": "chunked"})
    with pytest.raises(ProviderError) as raised:
        await ours(server)
    assert raised.value.kind == "truncated"
    theirs(server)


async def test_done_without_blank_line_is_truncated_like_the_sdk_drops_it(
    server: WireServer,
) -> None:
    """The final event with no blank line is dropped by both; only we call the result truncated."""
    body = frame(openai_events(openai_text(["a"]), done=False)) + b"data: [DONE]\n"
    serve_twice(server, body, {"framing": "close"})
    with pytest.raises(ProviderError) as raised:
        await ours(server)
    assert raised.value.kind == "truncated"
    assert theirs(server).choices[0].message.content == "a"

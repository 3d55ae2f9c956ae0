"""The fake server on the OpenAI wire, judged by the official openai SDK (the oracle)."""

from __future__ import annotations

import json
from typing import Any

import httpx2
import pytest

try:
    import openai
    from openai import AsyncOpenAI
except ImportError:  # pragma: no cover - the SDK is a pinned test-only extra
    pytest.skip("the openai SDK is not installed", allow_module_level=True)

from ioh_tui.core.transcript import Message, Request, ToolCall
from ioh_tui.providers.pieces import chunks
from ioh_tui.providers.testing.scripted import ScriptedProvider
from tests.fakes.provider_server import scenario, serving

READ = {"name": "read_file", "arguments": {"path": "calc.py"}}
EDIT = {
    "name": "edit_file",
    "arguments": {"path": "calc.py", "old_text": "a - b", "new_text": "a + b"},
}
SCRIPT = scenario(
    {
        "thinking": "The sign looks wrong somewhere in calc.py.",
        "text": "Looking at the code, then fixing the sign.",
        "tool_calls": [READ, EDIT],
        "usage": {"input_tokens": 900, "output_tokens": 40},
        "chunk_delay_ms": 1,
    },
    {
        "text": "Fixed.",
        "errors": [
            {"status": 429, "retry_after_s": 1},
            {"disconnect_after_chunks": 1},
            {"stream_error": "upstream fell over"},
        ],
    },
)
GOAL = [{"role": "user", "content": "fix the failing test"}]
AFTER_ONE = [*GOAL, {"role": "assistant", "content": "Looking."}]


def client(base_url: str) -> Any:
    """The SDK client, typed loosely: its request TypedDicts are not what is under test."""
    # max_retries=0: the SDK must see each scripted failure, not retry past it.
    return AsyncOpenAI(base_url=base_url, api_key="sk-test-secret", max_retries=0, timeout=10)


async def final(sdk: Any, messages: list[dict[str, Any]]) -> Any:
    async with sdk.chat.completions.stream(
        model="any", messages=messages, stream_options={"include_usage": True}
    ) as stream:
        async for _ in stream:
            pass
        return await stream.get_final_completion()


async def test_sdk_reassembles_text_thinking_tool_calls_stop_reason_and_usage() -> None:
    async with serving(SCRIPT) as server, client(server.base_url) as sdk:
        completion = await final(sdk, GOAL)
    choice = completion.choices[0]
    assert choice.message.content == "Looking at the code, then fixing the sign."
    assert choice.message.model_extra["reasoning_content"] == (
        "The sign looks wrong somewhere in calc.py."
    )
    calls = choice.message.tool_calls
    assert [(c.id, c.function.name) for c in calls] == [
        ("call_0_0", "read_file"),
        ("call_0_1", "edit_file"),
    ]
    assert [json.loads(c.function.arguments) for c in calls] == [
        READ["arguments"],
        EDIT["arguments"],
    ]
    assert choice.finish_reason == "tool_calls"
    assert (completion.usage.prompt_tokens, completion.usage.completion_tokens) == (900, 40)
    assert completion.usage.total_tokens == 940
    assert completion.model == "fake-model"


async def test_stream_is_real_chunks_with_fragments_and_a_usage_chunk_last() -> None:
    async with serving(SCRIPT) as server, client(server.base_url) as sdk:
        stream = await sdk.chat.completions.create(
            model="any", messages=GOAL, stream=True, stream_options={"include_usage": True}
        )
        received = [chunk async for chunk in stream]
    assert received[0].choices[0].delta.role == "assistant"
    texts = [c.choices[0].delta.content for c in received if c.choices]
    assert [t for t in texts if t] == chunks("Looking at the code, then fixing the sign.")
    fragments = [
        call for c in received if c.choices for call in (c.choices[0].delta.tool_calls or [])
    ]
    firsts = [f for f in fragments if f.id is not None]
    assert [(f.index, f.type, f.function.name) for f in firsts] == [
        (0, "function", "read_file"),
        (1, "function", "edit_file"),
    ]
    assert len(fragments) > 2 * len(firsts), "arguments arrive in several fragments"
    assert all(f.function.name is None for f in fragments if f.id is None)
    assert len({c.id for c in received}) == 1
    assert received[-2].choices[0].finish_reason == "tool_calls"
    assert received[-1].choices == []
    assert received[-1].usage.prompt_tokens == 900


async def test_without_include_usage_no_usage_chunk_is_sent() -> None:
    async with serving(SCRIPT) as server, client(server.base_url) as sdk:
        stream = await sdk.chat.completions.create(model="any", messages=GOAL, stream=True)
        received = [chunk async for chunk in stream]
    assert all(c.choices for c in received)
    assert all(c.usage is None for c in received)


async def test_errors_are_served_in_order_then_the_answer() -> None:
    async with serving(SCRIPT) as server, client(server.base_url) as sdk:
        with pytest.raises(openai.RateLimitError) as limited:
            await final(sdk, AFTER_ONE)
        assert limited.value.response.headers["retry-after"] == "1"
        assert limited.value.body == {
            "message": "scripted HTTP 429 (Too Many Requests)",
            "type": "requests",
            "param": None,
            "code": "rate_limit_exceeded",
        }
        with pytest.raises((openai.APIConnectionError, httpx2.TransportError)):
            await final(sdk, AFTER_ONE)
        with pytest.raises(openai.APIError) as broken:
            await final(sdk, AFTER_ONE)
        assert type(broken.value) is openai.APIError
        assert broken.value.message == "upstream fell over"
        answer = await final(sdk, AFTER_ONE)
    assert answer.choices[0].message.content == "Fixed."
    assert answer.choices[0].finish_reason == "stop"
    assert [r.served for r in server.requests] == [
        "http 429",
        "disconnect",
        "stream_error",
        "answer",
    ]
    assert {r.turn for r in server.requests} == {1}


async def test_a_disconnect_lets_exactly_n_pieces_through() -> None:
    text = "abcdefghijklmnopqrstuvwxyz0123456789"
    script = scenario({"text": text, "errors": [{"disconnect_after_chunks": 2}]})
    seen: list[str] = []

    async def read_all(stream: Any) -> None:
        async for chunk in stream:
            seen.append(chunk.choices[0].delta.content or "")

    async with serving(script) as server, client(server.base_url) as sdk:
        stream = await sdk.chat.completions.create(model="any", messages=GOAL, stream=True)
        with pytest.raises((openai.APIConnectionError, httpx2.TransportError)):
            await read_all(stream)
    assert "".join(seen) == text[:24]


async def test_the_same_transcript_gets_the_same_turn_and_extra_turns_get_plain_text() -> None:
    script = scenario({"text": "first"}, {"text": "second"})
    async with serving(script) as server, client(server.base_url) as sdk:
        again = [await final(sdk, GOAL) for _ in range(2)]
        second = await final(sdk, AFTER_ONE)
        beyond = await final(sdk, [*AFTER_ONE, {"role": "assistant", "content": "x"}])
    assert [c.choices[0].message.content for c in again] == ["first", "first"]
    assert second.choices[0].message.content == "second"
    assert beyond.choices[0].message.content == "I have nothing more to do."
    assert beyond.choices[0].finish_reason == "stop"
    assert [r.turn for r in server.requests] == [0, 0, 1, 2]


def to_openai(request: Request) -> list[dict[str, Any]]:
    """How an OpenAI-wire client writes our transcript (reference-harness §9.4)."""
    out: list[dict[str, Any]] = []
    for m in request.messages:
        entry: dict[str, Any] = {"role": m.role, "content": m.content}
        if m.tool_calls:
            entry["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": json.dumps(dict(c.arguments))},
                }
                for c in m.tool_calls
            ]
        if m.tool_call_id is not None:
            entry["tool_call_id"] = m.tool_call_id
        out.append(entry)
    return out


async def test_usage_estimates_match_the_scripted_provider_for_a_whole_transcript() -> None:
    script = scenario({"text": "reading"}, {"thinking": "hmm", "text": "The answer is 42."})
    request = Request(
        (
            Message("system", "You are a careful engineer."),
            Message("user", "fix the failing test in calc.py"),
            Message("assistant", "reading", (ToolCall("call_0_0", "read_file", {"path": "c"}),)),
            Message("tool", "def add(a, b):\n    return a - b\n", tool_call_id="call_0_0"),
        )
    )
    scripted = await ScriptedProvider(script).complete(request)
    async with serving(script) as server, client(server.base_url) as sdk:
        wire = await final(sdk, to_openai(request))
    assert scripted.usage is not None
    assert wire.usage.prompt_tokens == scripted.usage.input_tokens
    assert wire.usage.completion_tokens == scripted.usage.output_tokens
    assert wire.choices[0].message.content == scripted.text

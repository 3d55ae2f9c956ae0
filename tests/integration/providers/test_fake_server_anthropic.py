"""The fake server on the Anthropic wire, judged by the official anthropic SDK (the oracle)."""

from __future__ import annotations

from typing import Any

import httpx2
import pytest

try:
    import anthropic
    from anthropic import AsyncAnthropic
except ImportError:  # pragma: no cover - the SDK is a pinned test-only extra
    pytest.skip("the anthropic SDK is not installed", allow_module_level=True)

from ioh_tui.core.transcript import Message, Request, ToolCall
from ioh_tui.providers.testing.scripted import ScriptedProvider
from tests.fakes.provider_server import scenario, serving

READ = {"name": "read_file", "arguments": {"path": "calc.py"}}
GREP = {"name": "grep", "arguments": {"pattern": "a - b", "regex": False, "path": "src"}}
SCRIPT = scenario(
    {
        "thinking": "The sign looks wrong somewhere in calc.py.",
        "text": "Looking at the code first.",
        "tool_calls": [READ, GREP],
        "usage": {"input_tokens": 1200, "output_tokens": 75},
    },
    {
        "text": "Fixed.",
        "errors": [
            {"status": 429, "retry_after_s": 2},
            {"status": 529},
            {"disconnect_after_chunks": 0},
            {"stream_error": "Overloaded"},
            {"stream_error": "internal trouble"},
        ],
    },
)
GOAL = [{"role": "user", "content": "fix the failing test"}]
AFTER_ONE: list[dict[str, Any]] = [
    *GOAL,
    {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": "call_0_0", "name": "read_file", "input": {}}],
    },
    {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "call_0_0", "content": "x"}],
    },
]


def client(base_url: str) -> Any:
    """The SDK client, typed loosely: its request TypedDicts are not what is under test."""
    return AsyncAnthropic(base_url=base_url, api_key="sk-ant-secret", max_retries=0, timeout=10)


def body_of(error: Exception) -> Any:
    """The decoded error body the SDK kept (typed `object` by the SDK)."""
    return getattr(error, "body", None)


async def final(sdk: Any, messages: list[dict[str, Any]], **extra: Any) -> Any:
    async with sdk.messages.stream(
        model="any", max_tokens=1024, messages=messages, **extra
    ) as stream:
        return await stream.get_final_message()


async def test_sdk_reassembles_thinking_text_tool_use_stop_reason_and_usage() -> None:
    async with serving(SCRIPT, "anthropic") as server, client(server.base_url) as sdk:
        message = await final(sdk, GOAL)
    kinds = [block.type for block in message.content]
    assert kinds == ["thinking", "text", "tool_use", "tool_use"]
    thinking, text, read, grep = message.content
    assert thinking.thinking == "The sign looks wrong somewhere in calc.py."
    assert thinking.signature.startswith("fake-sig-")
    assert text.text == "Looking at the code first."
    assert (read.id, read.name, read.input) == ("call_0_0", "read_file", READ["arguments"])
    assert (grep.id, grep.name, grep.input) == ("call_0_1", "grep", GREP["arguments"])
    assert message.stop_reason == "tool_use"
    assert (message.usage.input_tokens, message.usage.output_tokens) == (1200, 75)
    assert message.model == "fake-model"
    # anthropic 2.x sends the key as a bearer token; neither header may be kept.
    headers = server.requests[0].headers
    assert "sk-ant-secret" not in repr(headers)
    assert headers.get("authorization", headers.get("x-api-key")) == "<redacted>"


async def test_events_come_in_the_real_order() -> None:
    async with serving(SCRIPT, "anthropic") as server, client(server.base_url) as sdk:
        stream = await sdk.messages.create(model="any", max_tokens=10, messages=GOAL, stream=True)
        events = [event async for event in stream]
    names = [e.type for e in events]
    assert names[0] == "message_start"  # the SDK hides the ping (checked on the raw wire elsewhere)
    assert names[-2:] == ["message_delta", "message_stop"]
    assert names.count("content_block_start") == names.count("content_block_stop") == 4
    deltas = [e.delta.type for e in events if e.type == "content_block_delta"]
    assert deltas.count("signature_delta") == 1
    signature_at = names.index("content_block_delta") + deltas.index("signature_delta")
    assert names[signature_at + 1] == "content_block_stop", "the signature closes the thinking"
    assert deltas.count("text_delta") == 3, "text streams in several pieces"
    assert deltas.count("input_json_delta") > 2


async def test_errors_are_served_in_order_then_the_answer() -> None:
    async with serving(SCRIPT, "anthropic") as server, client(server.base_url) as sdk:
        with pytest.raises(anthropic.RateLimitError) as limited:
            await final(sdk, AFTER_ONE)
        assert limited.value.response.headers["retry-after"] == "2"
        assert body_of(limited.value)["type"] == "error"
        assert body_of(limited.value)["error"]["type"] == "rate_limit_error"
        with pytest.raises(anthropic.InternalServerError) as overloaded:
            await final(sdk, AFTER_ONE)
        assert overloaded.value.status_code == 529
        assert body_of(overloaded.value)["error"]["type"] == "overloaded_error"
        with pytest.raises((anthropic.APIConnectionError, httpx2.TransportError)):
            await final(sdk, AFTER_ONE)
        for expected in ("overloaded_error", "api_error"):
            with pytest.raises(anthropic.APIStatusError) as mid_stream:
                await final(sdk, AFTER_ONE)
            assert mid_stream.value.status_code == 200
            assert body_of(mid_stream.value)["error"]["type"] == expected
        answer = await final(sdk, AFTER_ONE)
    assert [block.text for block in answer.content] == ["Fixed."]
    assert answer.stop_reason == "end_turn"
    assert [r.served for r in server.requests] == [
        "http 429",
        "http 529",
        "disconnect",
        "stream_error",
        "stream_error",
        "answer",
    ]


@pytest.mark.parametrize(
    ("status", "error", "kind"),
    [
        (401, anthropic.AuthenticationError, "authentication_error"),
        (403, anthropic.PermissionDeniedError, "permission_error"),
        (404, anthropic.NotFoundError, "not_found_error"),
        (400, anthropic.BadRequestError, "invalid_request_error"),
        (500, anthropic.InternalServerError, "api_error"),
    ],
)
async def test_http_errors_carry_the_type_matching_the_status(
    status: int, error: type[Exception], kind: str
) -> None:
    script = scenario({"text": "ok", "errors": [{"status": status}]})
    async with serving(script, "anthropic") as server, client(server.base_url) as sdk:
        with pytest.raises(error) as raised:
            await final(sdk, GOAL)
        assert (await final(sdk, GOAL)).content[0].text == "ok"
    assert body_of(raised.value)["error"]["type"] == kind


async def test_tool_results_in_user_messages_do_not_count_as_turns() -> None:
    script = scenario({"text": "zero"}, {"text": "one"})
    async with serving(script, "anthropic") as server, client(server.base_url) as sdk:
        message = await final(sdk, AFTER_ONE)
    assert message.content[0].text == "one"
    assert server.requests[0].turn == 1


async def test_usage_estimates_match_the_scripted_provider_for_a_whole_transcript() -> None:
    script = scenario({"text": "reading"}, {"text": "The answer is 42."})
    request = Request(
        (
            Message("system", "You are a careful engineer."),
            Message("user", "fix the failing test in calc.py"),
            Message("assistant", "reading", (ToolCall("call_0_0", "read_file", {"path": "c"}),)),
            Message("tool", "def add(a, b):\n    return a - b\n", tool_call_id="call_0_0"),
        )
    )
    scripted = await ScriptedProvider(script).complete(request)
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "fix the failing test in calc.py"},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "reading"},
                {"type": "tool_use", "id": "call_0_0", "name": "read_file", "input": {"path": "c"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "call_0_0",
                    "content": "def add(a, b):\n    return a - b\n",
                }
            ],
        },
    ]
    async with serving(script, "anthropic") as server, client(server.base_url) as sdk:
        wire = await final(sdk, messages, system="You are a careful engineer.")
    assert scripted.usage is not None
    assert wire.usage.input_tokens == scripted.usage.input_tokens
    assert wire.usage.output_tokens == scripted.usage.output_tokens

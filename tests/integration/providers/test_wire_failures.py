"""Our HTTP client against a loopback server misbehaving: statuses, cuts, stalls, error events."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator

import pytest

from ioh_tui.core.control import BudgetExhausted
from ioh_tui.core.errors import ProviderError
from ioh_tui.core.transcript import Attempt, Completion, Message, Request, Thought
from ioh_tui.providers import Anthropic, OpenAI
from ioh_tui.providers.retry import RETRY_AFTER_CAP_S, RetryPolicy, Sleep
from tests.integration.providers.wire_server import Framing, Reply, WireServer
from tests.integration.providers.wire_streams import (
    anthropic_events,
    anthropic_text,
    chunk,
    frame,
    openai_events,
    openai_text,
)

REQUEST = Request(messages=(Message("user", "hi"),))
FAST = RetryPolicy(base_s=0.01, max_s=0.02)
OK_BODY = frame(openai_events(openai_text(["Hel", "lo"])))
ANTHROPIC_OK = frame(anthropic_events(anthropic_text(["Hi"])))


@pytest.fixture
def server() -> Iterator[WireServer]:
    with WireServer() as running:
        yield running


def error_reply(status: int, message: str, **headers: str) -> Reply:
    body = f'{{"error": {{"message": "{message}", "type": "x"}}}}'.encode()
    return Reply(body, status=status, headers=headers, framing="length")


async def complete(
    server: WireServer,
    attempts: list[Attempt],
    *,
    max_retries: int = 2,
    attempt_timeout_s: float | None = 10.0,
    stall_timeout_s: float = 5.0,
    sleep: Sleep = asyncio.sleep,
) -> Completion:
    provider = OpenAI(
        base_url=f"{server.url}/v1",
        api_key="x",
        model="m",
        retry=FAST,
        max_retries=max_retries,
        timeout=attempt_timeout_s,
        stall_timeout_s=stall_timeout_s,
        sleep=sleep,
    )
    try:
        return await provider.complete(REQUEST, on_attempt=attempts.append)
    finally:
        await provider.aclose()


async def test_401_makes_exactly_one_request(server: WireServer) -> None:
    server.queue(error_reply(401, "bad key"), Reply(OK_BODY))
    attempts: list[Attempt] = []
    with pytest.raises(ProviderError, match="bad key") as raised:
        await complete(server, attempts)
    assert (raised.value.kind, raised.value.status) == ("auth", 401)
    assert len(server.received) == 1
    assert [a.failure for a in attempts] == ["auth (HTTP 401)"]


async def test_429_with_retry_after_waits_then_succeeds(server: WireServer) -> None:
    server.queue(error_reply(429, "slow down", **{"Retry-After": "0.2"}), Reply(OK_BODY))
    attempts: list[Attempt] = []
    started = time.monotonic()
    completion = await complete(server, attempts)
    assert time.monotonic() - started >= 0.2
    assert completion.text == "Hello"
    assert len(server.received) == 2
    assert attempts[0].failure == "rate_limited (HTTP 429)"
    assert attempts[0].retry_in_s == pytest.approx(0.2)
    assert attempts[1].failure is None


async def test_retry_after_ms_and_http_seconds_are_honoured(server: WireServer) -> None:
    waits: list[float] = []

    async def record(seconds: float) -> None:
        waits.append(seconds)

    server.queue(
        error_reply(429, "a", **{"Retry-After": "7"}),
        error_reply(503, "b", **{"retry-after-ms": "1500", "Retry-After": "9"}),
        Reply(OK_BODY),
    )
    await complete(server, [], sleep=record)
    assert waits == [7.0, 1.5]


async def test_repeated_500s_exhaust_retries_and_report_every_attempt(server: WireServer) -> None:
    server.queue(*(error_reply(500, "boom") for _ in range(4)))
    attempts: list[Attempt] = []
    with pytest.raises(ProviderError) as raised:
        await complete(server, attempts, max_retries=2)
    assert raised.value.kind == "server"
    assert len(server.received) == 3
    assert [a.attempt for a in attempts] == [1, 2, 3]
    assert {a.failure for a in attempts} == {"server (HTTP 500)"}
    assert [a.retry_in_s is not None for a in attempts] == [True, True, False]


async def test_context_overflow_and_redirects_are_not_retried(server: WireServer) -> None:
    server.queue(
        error_reply(400, "This model's maximum context length is 8192 tokens"),
        Reply(
            b"", status=307, headers={"location": "http://127.0.0.1:1/elsewhere"}, framing="length"
        ),
    )
    with pytest.raises(ProviderError) as overflow:
        await complete(server, [])
    assert overflow.value.kind == "context_overflow"
    with pytest.raises(ProviderError, match="redirects are not followed") as redirect:
        await complete(server, [])
    assert redirect.value.kind == "malformed"
    assert len(server.received) == 2


JSON = {"content-type": "application/json"}


async def test_a_whole_completion_in_json_is_read_as_its_stream(server: WireServer) -> None:
    # A compatible server that ignored `stream: true` and answered the whole completion.
    whole = {
        "id": "c1",
        "object": "chat.completion",
        "model": "m-1",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": "Reading.",
                    "reasoning_content": "The file first.",
                    "tool_calls": [
                        {
                            "id": "call_1",
                            "type": "function",
                            "function": {"name": "read_file", "arguments": '{"path": "a.py"}'},
                        }
                    ],
                },
                "finish_reason": "tool_calls",
            }
        ],
        "usage": {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17},
    }
    server.queue(Reply(json.dumps(whole).encode(), headers=JSON, framing="length"))
    attempts: list[Attempt] = []
    done = await complete(server, attempts)
    assert (done.text, done.thinking, done.stop_reason, done.model) == (
        "Reading.",
        "The file first.",
        "tool_calls",
        "m-1",
    )
    (call,) = done.tool_calls
    assert (call.id, call.name, dict(call.arguments)) == ("call_1", "read_file", {"path": "a.py"})
    assert done.usage is not None and (done.usage.input_tokens, done.usage.output_tokens) == (12, 5)
    assert len(server.received) == 1 and len(attempts) == 1


async def test_a_200_in_json_that_is_no_completion_is_said_and_not_retried(
    server: WireServer,
) -> None:
    server.queue(
        Reply(
            b'{"error": {"message": "no such model", "code": 404}}',
            framing="length",
            headers={"content-type": "application/json; charset=utf-8"},
        ),
        Reply(b"[1, 2]", framing="length", headers=JSON),
    )
    with pytest.raises(ProviderError) as caught:
        await complete(server, [])
    said = str(caught.value)
    assert caught.value.kind == "malformed" and not caught.value.retryable
    assert said.startswith("malformed (HTTP 200): the server answered application/json")
    assert said.endswith("not an event stream: 404: no such model")
    with pytest.raises(ProviderError, match=r"not an event stream: \[1, 2\]"):
        await complete(server, [])
    assert len(server.received) == 2


async def test_a_whole_anthropic_message_is_read_with_its_signed_thinking(
    server: WireServer,
) -> None:
    whole = {
        "type": "message",
        "model": "claude-x",
        "content": [
            {"type": "thinking", "thinking": "Why.", "signature": "sig=="},
            {"type": "text", "text": "Editing."},
            {"type": "tool_use", "id": "toolu_1", "name": "edit_file", "input": {"path": "a"}},
        ],
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 20, "output_tokens": 7},
    }
    server.queue(Reply(json.dumps(whole).encode(), headers=JSON, framing="length"))
    provider = Anthropic(base_url=server.url, api_key="k", model="m", retry=FAST)
    try:
        done = await provider.complete(REQUEST)
    finally:
        await provider.aclose()
    assert (done.text, done.thinking, done.stop_reason) == ("Editing.", "Why.", "tool_use")
    assert done.thoughts == (Thought("Why.", "sig=="),)
    (call,) = done.tool_calls
    assert (call.id, call.name, dict(call.arguments)) == ("toolu_1", "edit_file", {"path": "a"})
    assert done.usage is not None and done.usage.output_tokens == 7


async def test_a_stream_under_another_type_is_still_read(server: WireServer) -> None:
    server.queue(Reply(OK_BODY, headers={"content-type": "text/plain"}))
    done = await complete(server, [])
    assert done.text == "Hello"


@pytest.mark.parametrize(("framing", "kind"), [("chunked", "transport"), ("close", "truncated")])
async def test_mid_stream_disconnect_is_retried(
    server: WireServer, framing: Framing, kind: str
) -> None:
    # A cut chunked body is a broken transfer; a cut close-delimited body looks like a clean end
    # without [DONE]. Both are retried.
    server.queue(Reply(OK_BODY, framing=framing, cut_after=len(OK_BODY) // 2), Reply(OK_BODY))
    attempts: list[Attempt] = []
    completion = await complete(server, attempts)
    assert completion.text == "Hello"
    assert attempts[0].failure == kind
    assert len(server.received) == 2


async def test_stall_timeout_cuts_a_silent_stream_and_retries(server: WireServer) -> None:
    stalled = Reply(OK_BODY, pause_after=40, pause_s=1.0)
    server.queue(stalled, Reply(OK_BODY))
    attempts: list[Attempt] = []
    started = time.monotonic()
    completion = await complete(server, attempts, stall_timeout_s=0.2)
    assert time.monotonic() - started < 0.9
    assert completion.text == "Hello"
    assert attempts[0].failure == "timeout"


async def test_keep_alives_defeat_the_stall_timer_but_not_the_attempt_timeout(
    server: WireServer,
) -> None:
    trickle = b": keep-alive\n\n" * 40
    server.queue(Reply(trickle + OK_BODY, piece=14, piece_delay_s=0.03))
    attempts: list[Attempt] = []
    with pytest.raises(ProviderError) as raised:
        await complete(server, attempts, stall_timeout_s=0.2, attempt_timeout_s=0.3, max_retries=0)
    assert raised.value.kind == "timeout"


async def test_deadline_bounds_the_attempt_and_the_retry(server: WireServer) -> None:
    server.queue(Reply(OK_BODY, pause_after=10, pause_s=1.0))
    provider = OpenAI(base_url=f"{server.url}/v1", api_key="x", model="m", retry=FAST)
    started = time.monotonic()
    with pytest.raises(BudgetExhausted):
        await provider.complete(REQUEST, deadline=started + 0.2)
    assert time.monotonic() - started < 0.8
    await provider.aclose()


async def test_connection_refused_is_transport(server: WireServer) -> None:
    provider = OpenAI(base_url="http://127.0.0.1:9/v1", api_key="x", model="m", max_retries=0)
    with pytest.raises(ProviderError) as raised:
        await provider.complete(REQUEST)
    assert raised.value.kind == "transport"
    await provider.aclose()


async def test_timing_is_measured_on_a_real_stream(server: WireServer) -> None:
    server.queue(Reply(OK_BODY, pause_after=1, pause_s=0.05))
    completion = await complete(server, [])
    assert completion.ttft_ms is not None
    assert completion.latency_ms is not None
    assert 40 <= completion.ttft_ms <= completion.latency_ms


async def test_openai_error_chunk_mid_stream_is_retried(server: WireServer) -> None:
    error = chunk(error={"message": "Overloaded", "type": "overloaded_error"})
    server.queue(Reply(frame(openai_events([chunk({"content": "x"}), error]))), Reply(OK_BODY))
    attempts: list[Attempt] = []
    completion = await complete(server, attempts)
    assert completion.text == "Hello"
    assert attempts[0].failure == "overloaded"


async def test_anthropic_overloaded_event_and_529_are_retried(server: WireServer) -> None:
    overloaded = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    events = anthropic_events([anthropic_text(["x"])[0], overloaded])
    server.queue(
        Reply(frame(events)),
        Reply(
            b'{"type":"error","error":{"type":"overloaded_error"}}', status=529, framing="length"
        ),
        Reply(ANTHROPIC_OK),
    )
    attempts: list[Attempt] = []
    provider = Anthropic(base_url=server.url, api_key="k", model="m", retry=FAST)
    completion = await provider.complete(REQUEST, on_attempt=attempts.append)
    await provider.aclose()
    assert completion.text == "Hi"
    assert [a.failure for a in attempts] == ["overloaded", "overloaded (HTTP 529)", None]
    assert server.received[0].path == "/v1/messages"
    assert server.received[0].headers["x-api-key"] == "k"
    assert server.received[0].body["stream"] is True


async def test_connection_is_reused_after_done(server: WireServer) -> None:
    server.queue(Reply(OK_BODY, piece=9), Reply(OK_BODY))
    provider = OpenAI(base_url=f"{server.url}/v1", api_key="x", model="m")
    try:
        await provider.complete(REQUEST)
        await provider.complete(REQUEST)
    finally:
        await provider.aclose()
    ports = {r.client_port for r in server.received}
    assert len(server.received) == 2
    assert len(ports) == 1


async def test_a_retry_after_past_the_cap_waits_the_cap(server: WireServer) -> None:
    waits: list[float] = []

    async def record(seconds: float) -> None:
        waits.append(seconds)

    server.queue(
        error_reply(429, "a", **{"Retry-After": "3600"}),
        error_reply(503, "b", **{"retry-after-ms": "90000"}),
        Reply(OK_BODY),
    )
    attempts: list[Attempt] = []
    await complete(server, attempts, sleep=record)
    assert waits == [RETRY_AFTER_CAP_S, RETRY_AFTER_CAP_S] == [60.0, 60.0]
    assert [a.retry_in_s for a in attempts] == [60.0, 60.0, None]


async def test_the_call_s_max_retries_overrides_the_provider_s(server: WireServer) -> None:
    server.queue(*(error_reply(500, "boom") for _ in range(6)), Reply(OK_BODY))
    provider = OpenAI(base_url=f"{server.url}/v1", api_key="x", model="m", retry=FAST)
    try:
        with pytest.raises(ProviderError):
            await provider.complete(REQUEST, max_retries=0)
        assert len(server.received) == 1
        completion = await provider.complete(REQUEST, max_retries=5)
    finally:
        await provider.aclose()
    assert completion.text == "Hello"
    assert len(server.received) == 7

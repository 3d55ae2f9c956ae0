"""Differential: the same Anthropic-wire bytes from a loopback server, to our client and the SDK.

Both must agree on text, thinking and its signature (each block, in order, redacted ones too),
tool calls with inputs, stop reason and usage, across framings, piece sizes, CRLF line ends and
padded JSON. Our `input_tokens` is the whole prompt (fresh plus cache reads and writes), so the
SDK's three counters are summed to compare. Where we are deliberately stricter (no
`message_stop`), the test says so.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from ioh_tui.core.errors import ProviderError
from ioh_tui.core.transcript import Completion, Message, Request, StreamPiece, TextPiece
from ioh_tui.providers import Anthropic
from ioh_tui.providers.anthropic_wire import AnthropicAssembler
from tests.integration.providers.wire_server import Reply, WireServer
from tests.integration.providers.wire_streams import (
    PING,
    Json,
    anthropic_events,
    anthropic_interleaved_thinking,
    anthropic_refusal,
    anthropic_text,
    anthropic_thinking,
    anthropic_tools,
    block_delta,
    block_start,
    frame,
    message_start,
)

anthropic = pytest.importorskip("anthropic", reason="the anthropic SDK (test oracle) is missing")

REQUEST = Request(messages=(Message("user", "hi"),))

CASES: dict[str, list[Json]] = {
    "text_cache_pings": anthropic_text(["Hel", "lo, ", "world"]),
    "tools": anthropic_tools(),
    "thinking_signature": anthropic_thinking(),
    "interleaved_thinking": anthropic_interleaved_thinking(),
    "refusal": anthropic_refusal(),
    "multibyte": anthropic_text(["naïve ", "日本語 ", "😀"]),
}

TRANSPORTS: dict[str, dict[str, Any]] = {
    "chunked-whole": {"framing": "chunked"},
    "chunked-3-crlf-padded": {"framing": "chunked", "piece": 3, "crlf": True, "pad": True},
    "close-5-crlf": {"framing": "close", "piece": 5, "crlf": True},
    "length-7-padded": {"framing": "length", "piece": 7, "pad": True},
    "close-1": {"framing": "close", "piece": 1},
}


@pytest.fixture(scope="module")
def server() -> Iterator[WireServer]:
    with WireServer() as running:
        yield running


def serve_twice(server: WireServer, body: bytes, transport: dict[str, Any]) -> None:
    for _ in range(2):
        server.queue(Reply(body, framing=transport["framing"], piece=transport.get("piece", 0)))


class _Recorder(AnthropicAssembler):
    """Our assembler, kept so the test can read the thinking signature."""

    last: AnthropicAssembler | None = None


class _Anthropic(Anthropic):
    def assembler(self, on_piece: Any, used_ids: Any, started: float) -> AnthropicAssembler:
        _Recorder.last = _Recorder(on_piece, used_ids=used_ids, started=started)
        return _Recorder.last


async def ours(server: WireServer) -> tuple[Completion, list[StreamPiece], str]:
    pieces: list[StreamPiece] = []
    provider = _Anthropic(base_url=server.url, api_key="x", model="m", max_retries=0)
    try:
        completion = await provider.complete(REQUEST, on_piece=pieces.append)
    finally:
        await provider.aclose()
    assert _Recorder.last is not None
    return completion, pieces, _Recorder.last.signature


def theirs(server: WireServer) -> Any:
    client = anthropic.Anthropic(base_url=server.url, api_key="x", max_retries=0, timeout=10)
    with (
        client,
        client.messages.stream(
            model="m", max_tokens=100, messages=[{"role": "user", "content": "hi"}]
        ) as stream,
    ):
        for _ in stream:
            pass
        return stream.get_final_message()


def normalise_ours(completion: Completion, signature: str) -> dict[str, Any]:
    usage = completion.usage
    assert usage is not None
    return {
        "text": completion.text,
        "thinking": completion.thinking,
        "signature": signature,
        "thoughts": [(t.text, t.signature, t.redacted) for t in completion.thoughts],
        "calls": [(c.id, c.name, dict(c.arguments)) for c in completion.tool_calls],
        "stop": completion.stop_reason,
        "model": completion.model,
        "usage": (
            usage.input_tokens,
            usage.output_tokens,
            usage.cache_read_tokens,
            usage.cache_write_tokens,
        ),
    }


def normalise_theirs(message: Any) -> dict[str, Any]:
    blocks = message.content
    usage = message.usage
    read = usage.cache_read_input_tokens or 0
    write = usage.cache_creation_input_tokens or 0
    return {
        "text": "".join(b.text for b in blocks if b.type == "text"),
        "thinking": "".join(b.thinking for b in blocks if b.type == "thinking"),
        "signature": "".join(b.signature for b in blocks if b.type == "thinking"),
        # Each block the API must be sent back, in order, as the SDK keeps it.
        "thoughts": [
            (b.thinking, b.signature, "") if b.type == "thinking" else ("", "", b.data)
            for b in blocks
            if b.type in ("thinking", "redacted_thinking")
        ],
        "calls": [(b.id, b.name, dict(b.input)) for b in blocks if b.type == "tool_use"],
        "stop": message.stop_reason,
        "model": message.model,
        "usage": (usage.input_tokens + read + write, usage.output_tokens, read, write),
    }


@pytest.mark.parametrize("transport", TRANSPORTS.values(), ids=TRANSPORTS.keys())
@pytest.mark.parametrize("case", CASES.keys())
async def test_same_answer_as_the_sdk(
    server: WireServer, case: str, transport: dict[str, Any]
) -> None:
    events = anthropic_events(CASES[case], pad=transport.get("pad", False))
    serve_twice(server, frame(events, crlf=transport.get("crlf", False)), transport)
    completion, pieces, signature = await ours(server)
    expected = normalise_theirs(theirs(server))
    assert normalise_ours(completion, signature) == expected
    assert "".join(p.text for p in pieces if isinstance(p, TextPiece)) == expected["text"]


@pytest.mark.parametrize(
    ("error_type", "kind"),
    [("overloaded_error", "overloaded"), ("invalid_request_error", "stream_error")],
)
async def test_error_event_both_raise(server: WireServer, error_type: str, kind: str) -> None:
    error = {"type": "error", "error": {"type": error_type, "message": "Overloaded"}}
    events = [
        message_start(),
        PING,
        block_start(0, {"type": "text", "text": ""}),
        block_delta(0, {"type": "text_delta", "text": "par"}),
        error,
    ]
    serve_twice(server, frame(anthropic_events(events)), {"framing": "chunked"})
    with pytest.raises(ProviderError, match="Overloaded") as raised:
        await ours(server)
    assert raised.value.kind == kind
    with pytest.raises(anthropic.APIStatusError) as sdk_raised:
        theirs(server)
    assert sdk_raised.value.type == error_type


async def test_stricter_than_the_sdk_without_message_stop(server: WireServer) -> None:
    """Deliberate divergence: the SDK returns the partial message, we report `truncated`."""
    events = anthropic_events(anthropic_text(["a", "b"]))[:-1]
    serve_twice(server, frame(events), {"framing": "close"})
    with pytest.raises(ProviderError) as raised:
        await ours(server)
    assert raised.value.kind == "truncated"
    assert theirs(server).stop_reason == "end_turn"

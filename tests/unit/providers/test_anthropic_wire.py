"""The Anthropic wire without HTTP: request bodies, and assembling streams of events."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import pytest

from ioh_tui.core.errors import ProviderError
from ioh_tui.core.transcript import (
    Completion,
    Message,
    Request,
    StreamPiece,
    TextPiece,
    ThinkingPiece,
    Thought,
    ToolCall,
    ToolCallPiece,
    ToolSpec,
)
from ioh_tui.providers import anthropic_wire
from ioh_tui.providers.anthropic_wire import AnthropicAssembler, build_body
from ioh_tui.providers.assemble import event_json
from ioh_tui.providers.sse import ServerSentEvent


def start(input_tokens: int = 10, **usage: int) -> dict[str, Any]:
    message: dict[str, Any] = {"id": "msg_1", "model": "claude-x", "content": []}
    message["usage"] = {"input_tokens": input_tokens, "output_tokens": 1, **usage}
    return {"type": "message_start", "message": message}


def block(index: int, **content: Any) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": content}


def delta(index: int, **body: Any) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": body}


def text(index: int, value: str) -> dict[str, Any]:
    return delta(index, type="text_delta", text=value)


def partial(index: int, value: str) -> dict[str, Any]:
    return delta(index, type="input_json_delta", partial_json=value)


def end(stop: str = "end_turn", **usage: int) -> list[dict[str, Any]]:
    return [
        {"type": "message_delta", "delta": {"stop_reason": stop}, "usage": usage},
        {"type": "message_stop"},
    ]


def feed(
    events: Iterable[dict[str, Any]], *, named: bool = True, used_ids: Iterable[str] = ()
) -> tuple[Completion, list[StreamPiece], AnthropicAssembler]:
    pieces: list[StreamPiece] = []
    assembler = AnthropicAssembler(pieces.append, used_ids=used_ids)
    for event in events:
        name = str(event["type"]) if named else "message"
        assembler.feed(ServerSentEvent(event=name, data=json.dumps(event)))
    return assembler.finish(), pieces, assembler


PING = {"type": "ping"}


def test_text_with_pings_and_reconciled_usage() -> None:
    completion, pieces, _ = feed(
        [
            start(25, cache_read_input_tokens=100, cache_creation_input_tokens=7),
            PING,
            block(0, type="text", text=""),
            text(0, "Hel"),
            PING,
            text(0, "lo"),
            {"type": "content_block_stop", "index": 0},
            *end(output_tokens=15),
        ]
    )
    assert pieces == [TextPiece("Hel"), TextPiece("lo")]
    assert (completion.text, completion.stop_reason, completion.model) == (
        "Hello",
        "end_turn",
        "claude-x",
    )
    assert completion.usage is not None
    # The whole prompt: fresh input plus cache reads and writes.
    assert completion.usage.input_tokens == 132
    assert (completion.usage.cache_read_tokens, completion.usage.cache_write_tokens) == (100, 7)
    assert completion.usage.output_tokens == 15


def test_message_delta_usage_is_cumulative_not_added() -> None:
    events = [
        start(10),
        block(0, type="text", text="a"),
        {"type": "message_delta", "delta": {}, "usage": {"output_tokens": 10}},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn"},
            "usage": {"output_tokens": 15},
        },
        {"type": "message_stop"},
    ]
    completion, _, _ = feed(events)
    assert completion.usage is not None
    assert completion.usage.output_tokens == 15
    assert completion.text == "a"


def test_the_latest_usage_report_stands_even_when_it_is_lower() -> None:
    # A refusal stream: message_start says 1 output token, message_delta says 0 (the SDK says 0).
    events = [
        start(10),
        {
            "type": "message_delta",
            "delta": {"stop_reason": "refusal"},
            "usage": {"output_tokens": 0},
        },
        {"type": "message_stop"},
    ]
    completion, _, _ = feed(events)
    assert completion.usage is not None
    assert (completion.usage.input_tokens, completion.usage.output_tokens) == (10, 0)


def test_openrouter_input_tokens_arrive_in_message_delta() -> None:
    completion, _, _ = feed(
        [
            start(0),
            block(0, type="text", text=""),
            text(0, "x"),
            *end(input_tokens=321, output_tokens=4),
        ]
    )
    assert completion.usage is not None
    assert completion.usage.input_tokens == 321


def test_parallel_tool_use_blocks() -> None:
    completion, pieces, _ = feed(
        [
            start(),
            block(0, type="text", text=""),
            text(0, "Reading."),
            block(1, type="tool_use", id="toolu_1", name="read_file", input={}),
            partial(1, ""),
            partial(1, '{"path": '),
            partial(1, '"a.py"}'),
            block(2, type="tool_use", id="toolu_2", name="list_dir", input={}),
            partial(2, ""),
            *end("tool_use"),
        ]
    )
    assert completion.tool_calls == (
        ToolCall("toolu_1", "read_file", {"path": "a.py"}),
        ToolCall("toolu_2", "list_dir", {}),
    )
    assert [p for p in pieces if isinstance(p, ToolCallPiece)] == [
        ToolCallPiece(0, "toolu_1", "read_file", ""),
        ToolCallPiece(0, None, None, '{"path": '),
        ToolCallPiece(0, None, None, '"a.py"}'),
        ToolCallPiece(1, "toolu_2", "list_dir", ""),
    ]
    assert completion.stop_reason == "tool_use"


def test_unparsable_input_is_kept_with_its_raw_text() -> None:
    completion, _, _ = feed(
        [
            start(),
            block(0, type="tool_use", id="t", name="f", input={}),
            partial(0, '{"a":'),
            *end(),
        ]
    )
    assert completion.tool_calls == (ToolCall("t", "f", {}, '{"a":'),)


def test_input_given_whole_in_block_start_is_used() -> None:
    completion, _, _ = feed(
        [start(), block(0, type="tool_use", id="t", name="f", input={"k": [1]}), *end("tool_use")]
    )
    assert completion.tool_calls[0].arguments == {"k": [1]}


def test_repeated_and_transcript_ids_are_replaced() -> None:
    completion, _, _ = feed(
        [
            start(),
            block(0, type="tool_use", id="toolu_1", name="f", input={}),
            block(1, type="tool_use", id="toolu_1", name="g", input={}),
            block(2, type="tool_use", id="toolu_old", name="h", input={}),
            *end("tool_use"),
        ],
        used_ids={"toolu_old"},
    )
    ids = [c.id for c in completion.tool_calls]
    assert ids[0] == "toolu_1"
    assert len(set(ids)) == 3
    assert "toolu_old" not in ids


def test_thinking_with_signature() -> None:
    completion, pieces, assembler = feed(
        [
            start(),
            block(0, type="thinking", thinking="", signature=""),
            delta(0, type="thinking_delta", thinking="Hmm, "),
            delta(0, type="thinking_delta", thinking=""),
            delta(0, type="thinking_delta", thinking="yes."),
            delta(0, type="signature_delta", signature="sig=="),
            block(1, type="text", text=""),
            text(1, "Yes."),
            *end(),
        ]
    )
    assert completion.thinking == "Hmm, yes."
    assert assembler.signature == "sig=="
    assert pieces == [ThinkingPiece("Hmm, "), ThinkingPiece("yes."), TextPiece("Yes.")]


def test_each_thinking_block_is_kept_signed_and_redacted_ones_opaque() -> None:
    completion, _, _ = feed(
        [
            start(),
            block(0, type="thinking", thinking="", signature=""),
            delta(0, type="thinking_delta", thinking="First."),
            delta(0, type="signature_delta", signature="s1"),
            block(1, type="redacted_thinking", data="opaque=="),
            block(2, type="thinking", thinking="Second.", signature="s2"),
            block(3, type="thinking", thinking="", signature=""),
            delta(3, type="thinking_delta", thinking="Unsigned."),
            *end(),
        ]
    )
    assert completion.thinking == "First.Second.Unsigned."
    # An unsigned block could not be sent back: it is left out of the blocks kept.
    assert completion.thoughts == (
        Thought("First.", "s1"),
        Thought(redacted="opaque=="),
        Thought("Second.", "s2"),
    )


def test_thoughts_go_back_first_only_with_thinking_on() -> None:
    turn = Message(
        "assistant",
        "Fixing.",
        (ToolCall("toolu_1", "edit_file", {"path": "a"}),),
        thoughts=(Thought("Why.", "sig"), Thought(redacted="opaque")),
    )
    request = Request((Message("user", "go"), turn, Message("tool", "ok", tool_call_id="toolu_1")))
    on = build_body(request, "claude-x", thinking_budget=2048)
    assert on["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert on["max_tokens"] == request.max_tokens + 2048
    assert on["messages"][1]["content"][:2] == [
        {"type": "thinking", "thinking": "Why.", "signature": "sig"},
        {"type": "redacted_thinking", "data": "opaque"},
    ]
    off = build_body(request, "claude-x")
    assert "thinking" not in off and off["max_tokens"] == request.max_tokens
    assert [b["type"] for b in off["messages"][1]["content"]] == ["text", "tool_use"]


def test_unknown_events_blocks_and_deltas_are_ignored() -> None:
    completion, _, _ = feed(
        [
            start(),
            {"type": "brand_new_event", "x": 1},
            block(0, type="server_tool_use", id="srvtoolu_1", name="web_search", input={}),
            block(1, type="redacted_thinking", data="opaque"),
            block(2, type="text", text=""),
            delta(2, type="citations_delta", citation={"url": "u"}),
            delta(2, type="future_delta", stuff=1),
            text(2, "ok"),
            *end(),
        ]
    )
    assert (completion.text, completion.tool_calls) == ("ok", ())


def test_events_without_event_lines_are_read_by_type() -> None:
    completion, _, _ = feed([start(), block(0, type="text", text="hi"), *end()], named=False)
    assert completion.text == "hi"


@pytest.mark.parametrize(
    ("error_type", "kind"),
    [
        ("overloaded_error", "overloaded"),
        ("rate_limit_error", "rate_limited"),
        ("api_error", "server"),
        ("invalid_request_error", "stream_error"),
    ],
)
def test_error_event_raises_by_type(error_type: str, kind: str) -> None:
    error = {"type": "error", "error": {"type": error_type, "message": "Overloaded"}}
    with pytest.raises(ProviderError, match="Overloaded") as raised:
        feed([start(), block(0, type="text", text=""), text(0, "par"), error])
    assert raised.value.kind == kind


def test_stream_without_message_stop_is_truncated() -> None:
    events = [start(), block(0, type="text", text=""), text(0, "par"), *end()[:1]]
    with pytest.raises(ProviderError) as raised:
        feed(events)
    assert raised.value.kind == "truncated"


def test_empty_message_without_usage_is_malformed() -> None:
    with pytest.raises(ProviderError) as raised:
        feed([{"type": "message_start", "message": {"model": "m"}}, {"type": "message_stop"}])
    assert raised.value.kind == "malformed"


def test_body_shapes_system_tools_and_merged_turns() -> None:
    request = Request(
        messages=(
            Message("system", "Be brief."),
            Message("user", "Fix it."),
            Message(
                "assistant", "Looking.", tool_calls=(ToolCall("call:1", "read_file", {"p": 1}),)
            ),
            Message("tool", "contents", tool_call_id="call:1"),
            Message("user", "Also this."),
            Message("tool", "", tool_call_id="call_2"),
            Message("assistant", ""),
            Message("user", "Go on."),
        ),
        tools=(ToolSpec("read_file", "Read.", {"type": "object"}),),
        max_tokens=1000,
    )
    body = build_body(request, "claude-x")
    assert body["model"] == "claude-x"
    assert body["max_tokens"] == 1000
    assert body["stream"] is True
    assert body["system"] == [
        {"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}
    ]
    assert body["tools"] == [
        {"name": "read_file", "description": "Read.", "input_schema": {"type": "object"}}
    ]
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Fix it."}]},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Looking."},
                {"type": "tool_use", "id": "call_1", "name": "read_file", "input": {"p": 1}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "call_1", "content": "contents"},
                {"type": "tool_result", "tool_use_id": "call_2"},
                {"type": "text", "text": "Also this."},
                {"type": "text", "text": "Go on."},
            ],
        },
    ]


def test_text_deltas_of_one_shape_skip_the_full_decode(monkeypatch: pytest.MonkeyPatch) -> None:
    decoded: list[str] = []

    def counted(data: str) -> dict[str, Any] | None:
        decoded.append(data)
        return event_json(data)

    monkeypatch.setattr(anthropic_wire, "event_json", counted)
    texts = [f"tok{i} " for i in range(40)] + ['"quoted"\n', "caf\u00e9", ""]
    completion, pieces, _ = feed(
        [start(5), block(0, type="text", text=""), *(text(0, t) for t in texts), *end()]
    )
    assert completion.text == "".join(texts)
    assert pieces == [TextPiece(t) for t in texts if t]
    # message_start, the block start, the first delta (learning its shape), then the end.
    assert len(decoded) == 5

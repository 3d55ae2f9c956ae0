"""The OpenAI wire without HTTP: request bodies, and assembling streams of chunks."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import replace
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
    ToolCall,
    ToolCallPiece,
    ToolSpec,
)
from ioh_tui.providers import openai_wire
from ioh_tui.providers.assemble import event_json
from ioh_tui.providers.openai_wire import OpenAIAssembler, build_body
from ioh_tui.providers.sse import ServerSentEvent

ROLE = {"role": "assistant", "content": ""}


def chunk(
    delta: dict[str, Any] | None = None,
    *,
    finish: str | None = None,
    usage: dict[str, Any] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    choice = {"index": 0, "delta": delta or {}, "finish_reason": finish}
    return {"id": "c1", "model": "gpt-x", "choices": [choice], "usage": usage, **extra}


def call(index: int | None, arguments: str = "", **first: str) -> dict[str, Any]:
    fragment: dict[str, Any] = {"function": {"arguments": arguments}}
    if index is not None:
        fragment["index"] = index
    if "id" in first:
        fragment["id"] = first["id"]
    if "name" in first:
        fragment["function"]["name"] = first["name"]
    return chunk({"tool_calls": [fragment]})


FINISH = chunk(finish="stop")


def feed(
    chunks: Iterable[dict[str, Any] | str],
    *,
    done: bool = True,
    used_ids: Iterable[str] = (),
) -> tuple[Completion, list[StreamPiece]]:
    pieces: list[StreamPiece] = []
    assembler = OpenAIAssembler(pieces.append, used_ids=used_ids)
    for item in chunks:
        data = item if isinstance(item, str) else json.dumps(item)
        assert not assembler.feed(ServerSentEvent(data=data))
    if done:
        assert assembler.feed(ServerSentEvent(data="[DONE]"))
    return assembler.finish(), pieces


@pytest.mark.parametrize(
    ("flavour", "field", "value"),
    [
        ("openai", "reasoning_effort", "high"),
        ("compatible", "reasoning_effort", "high"),
        ("openrouter", "reasoning", {"effort": "high"}),
    ],
)
def test_a_reasoning_effort_is_said_in_each_flavours_terms(
    flavour: Any, field: str, value: object
) -> None:
    request = Request((Message("user", "hi"),))
    assert build_body(request, "m", flavour=flavour, effort="high")[field] == value
    plain = build_body(request, "m", flavour=flavour)
    assert "reasoning_effort" not in plain and "reasoning" not in plain


def test_text_streams_as_pieces_and_assembles() -> None:
    usage = {
        "prompt_tokens": 30,
        "completion_tokens": 5,
        "prompt_tokens_details": {"cached_tokens": 12},
        "completion_tokens_details": {"reasoning_tokens": 2},
    }
    completion, pieces = feed(
        [
            chunk(ROLE),
            chunk({"content": "Hel"}),
            chunk({"content": "lo"}),
            FINISH,
            {"choices": [], "usage": usage},
        ]
    )
    assert pieces == [TextPiece("Hel"), TextPiece("lo")]
    assert (completion.text, completion.stop_reason, completion.model) == ("Hello", "stop", "gpt-x")
    assert completion.usage is not None
    assert (completion.usage.input_tokens, completion.usage.output_tokens) == (30, 5)
    assert (completion.usage.cache_read_tokens, completion.usage.reasoning_tokens) == (12, 2)
    assert completion.usage.cost_usd is None


def test_ttft_is_the_first_content_and_latency_the_end() -> None:
    ticks: Iterator[float] = iter([0.25, 0.75])
    assembler = OpenAIAssembler(started=0.0, clock=lambda: next(ticks))
    assembler.feed(ServerSentEvent(data=json.dumps(chunk(ROLE))))
    assembler.feed(ServerSentEvent(data=json.dumps(chunk({"content": "x"}))))
    assembler.feed(ServerSentEvent(data=json.dumps(chunk({"content": "y"}))))
    assembler.feed(ServerSentEvent(data=json.dumps(FINISH)))
    assembler.feed(ServerSentEvent(data="[DONE]"))
    completion = assembler.finish()
    assert (completion.ttft_ms, completion.latency_ms) == (250.0, 750.0)


def test_parallel_tool_calls_by_index() -> None:
    completion, pieces = feed(
        [
            chunk({"role": "assistant", "content": None}),
            call(0, id="call_a", name="read_file"),
            call(0, '{"path": '),
            call(1, '{"pattern"', id="call_b", name="grep"),
            call(0, '"x.py"}'),
            call(1, ': "def"}'),
            chunk(finish="tool_calls"),
        ]
    )
    assert completion.tool_calls == (
        ToolCall("call_a", "read_file", {"path": "x.py"}),
        ToolCall("call_b", "grep", {"pattern": "def"}),
    )
    assert pieces[0] == ToolCallPiece(0, "call_a", "read_file", "")
    assert pieces[2] == ToolCallPiece(1, "call_b", "grep", '{"pattern"')
    assert "".join(p.arguments for p in pieces if isinstance(p, ToolCallPiece)) == (
        '{"path": {"pattern""x.py"}: "def"}'
    )


@pytest.mark.parametrize(
    ("raw", "arguments", "error"),
    [
        ("", {}, None),
        ("  ", {}, None),
        ('{"a": [1, 2]}', {"a": [1, 2]}, None),
        ('{"a": 1', {}, '{"a": 1'),
        ("[1, 2]", {}, "[1, 2]"),
        ('"text"', {}, '"text"'),
    ],
)
def test_arguments_parse_at_the_end_and_are_never_dropped(
    raw: str, arguments: dict[str, Any], error: str | None
) -> None:
    completion, _ = feed([call(0, raw, id="call_1", name="f"), chunk(finish="tool_calls")])
    assert completion.tool_calls == (ToolCall("call_1", "f", arguments, error),)


def test_whole_call_in_one_chunk_with_role_repeated_and_repeated_ids() -> None:
    def whole(name: str, arguments: str) -> dict[str, Any]:
        fragment: dict[str, Any] = {"id": "call_7", "index": 0, "type": "function"}
        fragment["function"] = {"name": name, "arguments": arguments}
        return chunk({"role": "assistant", "tool_calls": [fragment]})

    first = whole("read_file", '{"path": "a"}')
    second = whole("list_dir", '{"path": "."}')
    second["choices"][0]["delta"]["tool_calls"][0]["index"] = 1
    completion, pieces = feed([first, second, chunk({"role": "assistant"}, finish="tool_calls")])
    ids = [c.id for c in completion.tool_calls]
    assert ids[0] == "call_7"
    assert ids[1] != "call_7"
    assert ids[1].startswith("call_")
    assert [p.id for p in pieces if isinstance(p, ToolCallPiece)] == ids
    assert [c.arguments for c in completion.tool_calls] == [{"path": "a"}, {"path": "."}]


def test_ids_already_in_the_transcript_are_not_reused() -> None:
    completion, _ = feed(
        [call(0, "{}", id="call_1", name="f"), chunk(finish="tool_calls")], used_ids={"call_1"}
    )
    assert completion.tool_calls[0].id not in {"call_1", ""}


def test_missing_id_is_minted() -> None:
    completion, pieces = feed([call(0, "{}", name="f"), chunk(finish="tool_calls")])
    minted = completion.tool_calls[0].id
    assert minted.startswith("call_")
    assert len(minted) > 10
    assert pieces == [ToolCallPiece(0, minted, "f", "{}")]


def test_fragments_without_index_follow_their_ids() -> None:
    completion, _ = feed(
        [
            call(None, '{"a"', id="call_x", name="f"),
            call(None, ": 1}"),
            call(None, "{}", id="call_y", name="g"),
            chunk(finish="tool_calls"),
        ]
    )
    assert completion.tool_calls == (
        ToolCall("call_x", "f", {"a": 1}),
        ToolCall("call_y", "g", {}),
    )


def test_arguments_sent_as_an_object_are_accepted() -> None:
    fragment = {"index": 0, "id": "c", "function": {"name": "f", "arguments": {"k": 1}}}
    completion, _ = feed([chunk({"tool_calls": [fragment]}), chunk(finish="tool_calls")])
    assert completion.tool_calls[0].arguments == {"k": 1}


@pytest.mark.parametrize("field", ["reasoning", "reasoning_content"])
def test_reasoning_under_either_name_is_thinking(field: str) -> None:
    completion, pieces = feed(
        [chunk({field: "Let me "}), chunk({field: "think."}), chunk({"content": "4"}), FINISH]
    )
    assert completion.thinking == "Let me think."
    assert pieces[:2] == [ThinkingPiece("Let me "), ThinkingPiece("think.")]


def test_refusal_is_the_answer_text_and_kept_apart() -> None:
    pieces: list[StreamPiece] = []
    assembler = OpenAIAssembler(pieces.append)
    for item in (chunk(ROLE), chunk({"refusal": "No."}), FINISH):
        assembler.feed(ServerSentEvent(data=json.dumps(item)))
    assembler.feed(ServerSentEvent(data="[DONE]"))
    assert assembler.finish().text == "No."
    assert assembler.refusal == "No."
    assert pieces == [TextPiece("No.")]


def test_openrouter_usage_chunk_with_cost_and_choices() -> None:
    usage = {"prompt_tokens": 40, "completion_tokens": 9, "cost": 0.0021, "is_byok": False}
    completion, _ = feed(
        [chunk({"content": "hi"}), FINISH, chunk({"role": "assistant", "content": ""}, usage=usage)]
    )
    assert completion.usage is not None
    assert completion.usage.cost_usd == pytest.approx(0.0021)
    assert completion.text == "hi"


def test_llama_cpp_timings_stand_in_for_missing_usage() -> None:
    timings = {"prompt_n": 20, "cache_n": 5, "predicted_n": 7, "predicted_per_second": 30.1}
    completion, _ = feed([chunk({"content": "x"}), chunk(finish="stop", timings=timings)])
    assert completion.usage is not None
    assert (completion.usage.input_tokens, completion.usage.output_tokens) == (25, 7)
    assert completion.usage.cache_read_tokens == 5


def test_usage_on_the_finish_chunk_wins_over_timings() -> None:
    usage = {"prompt_tokens": 3, "completion_tokens": 1}
    finish = chunk(finish="stop", usage=usage, timings={"prompt_n": 99, "predicted_n": 99})
    completion, _ = feed([chunk({"content": "x"}), finish])
    assert completion.usage is not None
    assert completion.usage.input_tokens == 3


def test_keep_alive_events_and_other_choices_are_ignored() -> None:
    other = {"choices": [{"index": 1, "delta": {"content": "other"}, "finish_reason": None}]}
    completion, _ = feed(["", "  ", chunk({"content": "a"}), other, FINISH])
    assert completion.text == "a"


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        ({"type": "overloaded_error", "message": "Overloaded"}, "overloaded"),
        ({"type": "rate_limit_error", "message": "slow down"}, "rate_limited"),
        ({"type": "api_error", "message": "boom"}, "server"),
        ({"type": "server_error", "message": "boom"}, "server"),
        ({"code": 400, "message": "Token limit reached"}, "stream_error"),
        ({"code": 502, "message": "upstream"}, "server"),
        ({"code": "server_error", "message": "x"}, "server"),
        ({"message": "no type at all"}, "stream_error"),
    ],
)
def test_mid_stream_error_chunk_raises_by_type(error: dict[str, Any], kind: str) -> None:
    with pytest.raises(ProviderError) as raised:
        feed([chunk({"content": "partial"}), {"error": error, "choices": []}])
    assert raised.value.kind == kind
    assert raised.value.retryable


def test_vllm_error_object_raises() -> None:
    vllm = {"object": "error", "message": "bad", "type": "BadRequestError", "code": 400}
    with pytest.raises(ProviderError, match="bad") as raised:
        feed([vllm])
    assert raised.value.kind == "stream_error"


def test_stream_without_done_is_truncated() -> None:
    with pytest.raises(ProviderError) as raised:
        feed([chunk({"content": "a"}), FINISH], done=False)
    assert raised.value.kind == "truncated"


def test_done_without_finish_reason_is_truncated() -> None:
    with pytest.raises(ProviderError) as raised:
        feed([chunk({"content": "a"})])
    assert raised.value.kind == "truncated"


def test_non_json_event_is_malformed() -> None:
    with pytest.raises(ProviderError) as raised:
        feed(["{not json"])
    assert raised.value.kind == "malformed"


def test_finished_stream_with_nothing_in_it_is_malformed() -> None:
    with pytest.raises(ProviderError) as raised:
        feed([chunk(ROLE), FINISH])
    assert raised.value.kind == "malformed"


def transcript() -> Request:
    calls = (
        ToolCall("call_1", "read_file", {"path": "a.py"}),
        ToolCall("call_2", "grep", {}, arguments_error='{"pattern": '),
    )
    return Request(
        messages=(
            Message("system", "Be brief."),
            Message("user", "Fix it."),
            Message("assistant", "", tool_calls=calls),
            Message("tool", "contents", tool_call_id="call_1"),
            Message("tool", "error", tool_call_id="call_2"),
            Message("assistant", "Done."),
        ),
        tools=(ToolSpec("read_file", "Read a file.", {"type": "object"}),),
        max_tokens=512,
    )


def test_body_carries_the_transcript_tools_and_stream_options() -> None:
    body = build_body(transcript(), "gpt-x")
    assert body["model"] == "gpt-x"
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["max_completion_tokens"] == 512
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "read_file",
                "description": "Read a file.",
                "parameters": {"type": "object"},
            },
        }
    ]
    assert body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Fix it."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "read_file", "arguments": '{"path": "a.py"}'},
                },
                {
                    "id": "call_2",
                    "type": "function",
                    "function": {"name": "grep", "arguments": '{"pattern": '},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "contents"},
        {"role": "tool", "tool_call_id": "call_2", "content": "error"},
        {"role": "assistant", "content": "Done."},
    ]


def test_body_flavours() -> None:
    request = Request(messages=(Message("system", "S"), Message("user", "U")), model="override")
    openrouter = build_body(request, "m", flavour="openrouter")
    assert openrouter["model"] == "override"
    assert openrouter["max_tokens"] == 8192
    assert "max_completion_tokens" not in openrouter
    assert openrouter["messages"][0]["content"] == [
        {"type": "text", "text": "S", "cache_control": {"type": "ephemeral"}}
    ]
    compatible = build_body(request, "m", flavour="compatible")
    assert compatible["messages"][0] == {"role": "system", "content": "S"}
    assert "tools" not in compatible


def test_text_chunks_of_one_shape_skip_the_full_decode(monkeypatch: pytest.MonkeyPatch) -> None:
    decoded: list[str] = []
    real = event_json

    def counted(data: str) -> dict[str, Any] | None:
        decoded.append(data)
        return real(data)

    monkeypatch.setattr(openai_wire, "event_json", counted)
    texts = [f"tok{i} " for i in range(50)] + ['say "hi"\n', "caf\u00e9 \u2603", "\\"]
    completion, pieces = feed([chunk(ROLE), *(chunk({"content": t}) for t in texts), FINISH])
    assert completion.text == "".join(texts)
    assert pieces == [TextPiece(t) for t in texts]
    # The role chunk and the first text chunk (a new shape) in full, then only the finish.
    assert len(decoded) == 3


@pytest.mark.parametrize(
    "middle",
    [
        '"unterminated',
        '"a\tb"',  # a raw control character: json.loads refuses it, so must the shape
        '"a", "content": "b"',  # two literals, not one string token (the last key wins)
        "42",
    ],
)
def test_a_chunk_that_only_looks_like_the_shape_reads_as_json_loads_reads_it(
    middle: str,
) -> None:
    prefix, _, suffix = json.dumps(chunk({"content": "x"})).partition('"x"')
    odd = prefix + middle + suffix
    try:
        content = json.loads(odd)["choices"][0]["delta"]["content"]
    except ValueError:
        with pytest.raises(ProviderError) as caught:
            feed([chunk({"content": "x"}), odd, FINISH])
        assert caught.value.kind == "malformed"
        return
    completion, _ = feed([chunk({"content": "x"}), odd, FINISH])
    assert completion.text == "x" + (content if isinstance(content, str) else "")


def _joined(pieces: list[StreamPiece]) -> list[StreamPiece]:
    """`pieces` with each run of text pieces made one."""
    out: list[StreamPiece] = []
    for piece in pieces:
        last = out[-1] if out else None
        if isinstance(piece, TextPiece) and isinstance(last, TextPiece):
            out[-1] = TextPiece(last.text + piece.text)
        else:
            out.append(piece)
    return out


def test_a_chunks_events_fed_at_once_assemble_as_one_at_a_time() -> None:
    items = [
        chunk(ROLE),
        *(chunk({"content": f"t{i} "}) for i in range(5)),
        call(0, '{"pa', id="x1", name="read_file"),
        chunk({"content": "more"}),
        FINISH,
        {"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 7}},
    ]
    events = [ServerSentEvent(data=json.dumps(item)) for item in items]
    events += [ServerSentEvent(data="[DONE]"), ServerSentEvent(data="not even JSON")]
    one, pieces = feed(items)
    at_once: list[StreamPiece] = []
    assembler = OpenAIAssembler(at_once.append)
    # Split where a network chunk might end; what follows [DONE] is never read.
    assert not assembler.feed_all(events[:3])
    assert assembler.feed_all(events[3:])
    got = assembler.finish()
    assert replace(got, ttft_ms=None, latency_ms=0.0) == replace(one, ttft_ms=None, latency_ms=0.0)
    # A run of text events in one network chunk is one piece of the same text, in the same
    # place among the other pieces.
    assert _joined(at_once) == _joined(pieces)
    assert len(at_once) < len(pieces)
    assert one.usage is not None and one.usage.output_tokens == 7
    with pytest.raises(ProviderError, match="not JSON"):
        OpenAIAssembler().feed_all([ServerSentEvent(data="{bad")])

"""SSE byte streams shaped like the real wires, for differential and failure tests.

Shapes follow the research notes (wire-and-sandbox-research.md section 1): OpenAI chunks with a
role chunk, fragmented tool arguments and an include_usage chunk; OpenRouter comment lines,
reasoning and a usage chunk with `cost`; Anthropic events with pings, padded JSON, thinking with
a signature and cumulative `message_delta` usage.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

Json = Mapping[str, Any]


def frame(
    events: Iterable[tuple[str | None, str]], *, crlf: bool = False, comments: int = 0
) -> bytes:
    """Frame (event name, data) pairs as SSE; `comments` keep-alives go before each event."""
    end = "\r\n" if crlf else "\n"
    out: list[str] = []
    for name, data in events:
        out.extend(f": OPENROUTER PROCESSING{end}{end}" for _ in range(comments))
        if name is not None:
            out.append(f"event: {name}{end}")
        out.append(f"data: {data}{end}{end}")
    return "".join(out).encode()


def openai_events(chunks: Iterable[Json], *, done: bool = True) -> list[tuple[str | None, str]]:
    """Chunk objects as data-only events, then `[DONE]`."""
    events: list[tuple[str | None, str]] = [(None, json.dumps(c)) for c in chunks]
    if done:
        events.append((None, "[DONE]"))
    return events


def chunk(
    delta: Json | None = None,
    *,
    finish: str | None = None,
    usage: Json | None = None,
    choices: bool = True,
    **extra: Any,
) -> dict[str, Any]:
    """One chat.completion.chunk."""
    body: dict[str, Any] = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1700000000,
        "model": "gpt-test",
        "choices": (
            [{"index": 0, "delta": dict(delta or {}), "logprobs": None, "finish_reason": finish}]
            if choices
            else []
        ),
        "usage": dict(usage) if usage is not None else None,
    }
    body.update(extra)
    return body


def usage(prompt: int, completion: int, cached: int = 0, **extra: Any) -> dict[str, Any]:
    """An OpenAI usage object."""
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": cached, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0},
        **extra,
    }


ROLE = {"role": "assistant", "content": "", "refusal": None}


def openai_text(text_parts: Iterable[str], *, prompt: int = 12, completion: int = 7) -> list[Json]:
    """A plain text answer."""
    return [
        chunk(ROLE),
        *(chunk({"content": p}) for p in text_parts),
        chunk({}, finish="stop"),
        chunk(choices=False, usage=usage(prompt, completion, cached=4)),
    ]


def openai_parallel_tools() -> list[Json]:
    """Two parallel tool calls, arguments cut at arbitrary places."""

    def fragment(index: int, arguments: str, **first: Any) -> dict[str, Any]:
        call: dict[str, Any] = {"index": index, "function": {"arguments": arguments}}
        if first:
            call.update(id=first["id"], type="function")
            call["function"]["name"] = first["name"]
        return chunk({"tool_calls": [call]})

    return [
        chunk({"role": "assistant", "content": None}),
        fragment(0, "", id="call_aaa", name="read_file"),
        fragment(0, '{"pa'),
        fragment(0, 'th": "calc'),
        fragment(0, '.py"}'),
        fragment(1, "", id="call_bbb", name="grep"),
        fragment(1, '{"pattern": "de'),
        fragment(1, 'f ", "regex": false}'),
        chunk({}, finish="tool_calls"),
        chunk(choices=False, usage=usage(80, 31)),
    ]


def openai_refusal() -> list[Json]:
    """A refusal streamed in the `refusal` field."""
    return [
        chunk(ROLE),
        chunk({"refusal": "I can't "}),
        chunk({"refusal": "help with that."}),
        chunk({}, finish="stop"),
        chunk(choices=False, usage=usage(20, 6)),
    ]


def openrouter_reasoning() -> list[Json]:
    """OpenRouter: reasoning deltas, provider field, usage on a chunk that keeps its choices."""
    extra: dict[str, Any] = {"provider": "OpenAI", "id": "gen-123"}
    final_usage = usage(
        40,
        25,
        cached=10,
        cost=0.00042,
        is_byok=False,
        cost_details={"upstream_inference_cost": None},
    )
    details = {"type": "reasoning.text", "text": "Think", "format": "unknown", "index": 0}
    return [
        chunk({"role": "assistant", "content": "", "reasoning": "Think"}, **extra),
        chunk({"role": "assistant", "content": "", "reasoning_details": [details]}, **extra),
        chunk({"role": "assistant", "content": "", "reasoning": "ing hard."}, **extra),
        chunk({"role": "assistant", "content": "The answer"}, **extra),
        chunk({"role": "assistant", "content": " is 4."}, **extra),
        chunk(
            {"role": "assistant", "content": ""},
            finish="stop",
            native_finish_reason="stop",
            **extra,
        ),
        chunk({"role": "assistant", "content": ""}, usage=final_usage, **extra),
    ]


def anthropic_events(events: Iterable[Json], *, pad: bool = False) -> list[tuple[str | None, str]]:
    """Event objects named by their type; `pad` adds the spaces real streams put before `}`."""
    framed: list[tuple[str | None, str]] = []
    for event in events:
        data = json.dumps(event)
        if pad:
            data = data[:-1] + "        }"
        framed.append((str(event["type"]), data))
    return framed


def message_start(input_tokens: int = 25, *, cache_read: int = 0, cache_write: int = 0) -> Json:
    """`message_start` with its usage."""
    return {
        "type": "message_start",
        "message": {
            "id": "msg_01",
            "type": "message",
            "role": "assistant",
            "model": "claude-test",
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {
                "input_tokens": input_tokens,
                "output_tokens": 1,
                "cache_creation_input_tokens": cache_write,
                "cache_read_input_tokens": cache_read,
            },
        },
    }


def message_end(stop: str, output_tokens: int, **usage_extra: int) -> list[Json]:
    """`message_delta` (cumulative usage) and `message_stop`."""
    return [
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": {"output_tokens": output_tokens, **usage_extra},
        },
        {"type": "message_stop"},
    ]


def block_start(index: int, block: Json) -> Json:
    """`content_block_start`."""
    return {"type": "content_block_start", "index": index, "content_block": dict(block)}


def block_delta(index: int, delta: Json) -> Json:
    """`content_block_delta`."""
    return {"type": "content_block_delta", "index": index, "delta": dict(delta)}


def block_stop(index: int) -> Json:
    """`content_block_stop`."""
    return {"type": "content_block_stop", "index": index}


PING: Json = {"type": "ping"}


def anthropic_text(parts: Iterable[str]) -> list[Json]:
    """A text answer with pings between events."""
    return [
        message_start(25, cache_read=100, cache_write=7),
        block_start(0, {"type": "text", "text": ""}),
        PING,
        *(block_delta(0, {"type": "text_delta", "text": p}) for p in parts),
        PING,
        block_stop(0),
        *message_end("end_turn", 15),
    ]


def anthropic_tools() -> list[Json]:
    """Text then two tool_use blocks; first input fragment empty, as real streams send."""
    return [
        message_start(300),
        block_start(0, {"type": "text", "text": ""}),
        block_delta(0, {"type": "text_delta", "text": "Reading both."}),
        block_stop(0),
        block_start(1, {"type": "tool_use", "id": "toolu_01", "name": "read_file", "input": {}}),
        block_delta(1, {"type": "input_json_delta", "partial_json": ""}),
        block_delta(1, {"type": "input_json_delta", "partial_json": '{"path": "a'}),
        block_delta(1, {"type": "input_json_delta", "partial_json": '.py"}'}),
        block_stop(1),
        block_start(2, {"type": "tool_use", "id": "toolu_02", "name": "list_dir", "input": {}}),
        block_delta(2, {"type": "input_json_delta", "partial_json": ""}),
        block_stop(2),
        *message_end("tool_use", 60),
    ]


def anthropic_thinking() -> list[Json]:
    """A thinking block with a signature, then text."""
    return [
        message_start(50),
        block_start(0, {"type": "thinking", "thinking": "", "signature": ""}),
        block_delta(0, {"type": "thinking_delta", "thinking": "The sign "}),
        block_delta(0, {"type": "thinking_delta", "thinking": "is wrong."}),
        block_delta(0, {"type": "signature_delta", "signature": "EqQBCgIYAhIM1gbcDa9GJwZA"}),
        block_stop(0),
        block_start(1, {"type": "text", "text": ""}),
        block_delta(1, {"type": "text_delta", "text": "Fixed the sign."}),
        block_stop(1),
        *message_end("end_turn", 90),
    ]


def anthropic_interleaved_thinking() -> list[Json]:
    """Thinking, a redacted block, a tool call, then more thinking: each block kept apart."""
    return [
        message_start(40),
        block_start(0, {"type": "thinking", "thinking": "", "signature": ""}),
        block_delta(0, {"type": "thinking_delta", "thinking": "First the file."}),
        block_delta(0, {"type": "signature_delta", "signature": "c2lnLW9uZQ=="}),
        block_stop(0),
        block_start(1, {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4a"}),
        block_stop(1),
        block_start(2, {"type": "tool_use", "id": "toolu_09", "name": "read_file", "input": {}}),
        block_delta(2, {"type": "input_json_delta", "partial_json": '{"path": "a.py"}'}),
        block_stop(2),
        block_start(3, {"type": "thinking", "thinking": "Then the test.", "signature": ""}),
        block_delta(3, {"type": "signature_delta", "signature": "c2lnLXR3bw=="}),
        block_stop(3),
        *message_end("tool_use", 70),
    ]


def anthropic_refusal() -> list[Json]:
    """A refusal: some text, then stop_reason `refusal`."""
    return [
        message_start(12),
        block_start(0, {"type": "text", "text": ""}),
        block_delta(0, {"type": "text_delta", "text": "I can't help with that."}),
        block_stop(0),
        *message_end("refusal", 9),
    ]

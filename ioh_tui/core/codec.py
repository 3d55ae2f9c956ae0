"""The one JSON form of the conversation types: completions, transcript messages, tool calls.

The store keeps a model turn before its tools run (a staged turn) and the tool calls of every
committed message; a recording keeps requests and completions. They all go through these functions,
so each type has exactly one JSON form.

A tool call's unparsable argument text is kept under `"error"`: the key staged turns have always
been stored with (the store only migrates forward, so stored turns must keep loading). Recordings
written before this module used `"arguments_error"`; it is still read.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any

from ioh_tui.core.transcript import Completion, Image, Message, Thought, ToolCall, Usage


def tool_call_to_json(call: ToolCall) -> dict[str, Any]:
    """A tool call as JSON data (the argument error under `"error"`)."""
    return {
        "id": call.id,
        "name": call.name,
        "arguments": dict(call.arguments),
        "error": call.arguments_error,
    }


def tool_call_from_json(data: Mapping[str, Any]) -> ToolCall:
    """The inverse of `tool_call_to_json`; also reads the older `"arguments_error"` key."""
    error = data.get("error", data.get("arguments_error"))
    return ToolCall(data["id"], data["name"], data["arguments"], error)


def usage_to_json(usage: Usage | None) -> dict[str, Any] | None:
    """Usage as JSON data (None stays None: the provider reported nothing)."""
    if usage is None:
        return None
    return {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cache_read_tokens": usage.cache_read_tokens,
        "cache_write_tokens": usage.cache_write_tokens,
        "reasoning_tokens": usage.reasoning_tokens,
        "cost_usd": usage.cost_usd,
    }


def completion_to_json(completion: Completion) -> dict[str, Any]:
    """A completion as JSON data (every field, so a stored form is complete)."""
    return {
        "text": completion.text,
        "thinking": completion.thinking,
        "tool_calls": [tool_call_to_json(c) for c in completion.tool_calls],
        "usage": usage_to_json(completion.usage),
        "stop_reason": completion.stop_reason,
        "model": completion.model,
        "ttft_ms": completion.ttft_ms,
        "latency_ms": completion.latency_ms,
        **({"thoughts": thoughts_to_json(completion.thoughts)} if completion.thoughts else {}),
    }


def completion_from_json(data: Mapping[str, Any]) -> Completion:
    """The inverse of `completion_to_json`; a key an older writer left out takes its default."""
    usage = data.get("usage")
    return Completion(
        text=data.get("text", ""),
        thinking=data.get("thinking", ""),
        tool_calls=tuple(tool_call_from_json(c) for c in data.get("tool_calls", [])),
        usage=Usage(**usage) if usage else None,
        stop_reason=data.get("stop_reason"),
        model=data.get("model"),
        ttft_ms=data.get("ttft_ms"),
        latency_ms=data.get("latency_ms"),
        thoughts=thoughts_from_json(data.get("thoughts", ())),
    )


def thoughts_to_json(thoughts: tuple[Thought, ...]) -> list[dict[str, str]]:
    """Signed reasoning blocks as JSON data (each block's empty fields left out)."""
    return [
        {
            k: v
            for k, v in (("text", t.text), ("signature", t.signature), ("redacted", t.redacted))
            if v
        }
        for t in thoughts
    ]


def thoughts_from_json(data: Any) -> tuple[Thought, ...]:
    """The inverse of `thoughts_to_json`."""
    return tuple(
        Thought(b.get("text", ""), b.get("signature", ""), b.get("redacted", "")) for b in data
    )


def image_to_json(image: Image) -> dict[str, Any]:
    """An image as JSON data, its bytes in base64."""
    return {
        "media_type": image.media_type,
        "name": image.name,
        "width": image.width,
        "height": image.height,
        "data": base64.b64encode(image.data).decode("ascii"),
    }


def image_from_json(data: Mapping[str, Any]) -> Image:
    """The inverse of `image_to_json`."""
    return Image(
        data["media_type"],
        base64.b64decode(data["data"]),
        data["name"],
        int(data["width"]),
        int(data["height"]),
    )


def message_to_json(message: Message) -> dict[str, Any]:
    """A transcript message as JSON data (`images` and `thoughts` only when it has some)."""
    data: dict[str, Any] = {
        "role": message.role,
        "content": message.content,
        "tool_calls": [tool_call_to_json(c) for c in message.tool_calls],
        "tool_call_id": message.tool_call_id,
    }
    if message.images:
        data["images"] = [image_to_json(i) for i in message.images]
    if message.thoughts:
        data["thoughts"] = thoughts_to_json(message.thoughts)
    return data


def message_from_json(data: Mapping[str, Any]) -> Message:
    """The inverse of `message_to_json`."""
    return Message(
        data["role"],
        data["content"],
        tuple(tool_call_from_json(c) for c in data.get("tool_calls", [])),
        data.get("tool_call_id"),
        tuple(image_from_json(i) for i in data.get("images", ())),
        thoughts_from_json(data.get("thoughts", ())),
    )

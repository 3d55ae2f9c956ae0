"""The real OpenAI and Anthropic streaming wires, written out from a scenario turn (for serve-fake).

Pure functions, no I/O: a turn becomes SSE frames, a failure becomes the provider's error body, and
a wire request body becomes the `Request` the scripted provider would have been given, so the fake
server and `ScriptedProvider` pick the same turn and report the same usage.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any

from ioh_tui.core.transcript import Message, Request, TextPiece, ThinkingPiece, ToolCall

# The piece sequence is the scripted provider's own, so "disconnect after N chunks" cuts both at the
# same place and tool-call ids agree between the in-process and the wire doubles.
from ioh_tui.providers.testing.fake_thinking import fake_signature
from ioh_tui.providers.testing.scenario import Turn, turn_pieces

WIRES = ("openai", "anthropic")


@dataclass(frozen=True, slots=True)
class Frame:
    """One SSE event as bytes on the wire."""

    data: bytes
    piece: bool = False
    """True when it carries one content piece (what `disconnect_after_chunks` counts)."""


@dataclass(frozen=True, slots=True)
class StreamPlan:
    """A whole answer: opening events and content, then the events that finish it."""

    body: tuple[Frame, ...]
    tail: tuple[Frame, ...]


def _json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _data(payload: Any) -> bytes:
    return f"data: {_json(payload)}\n\n".encode()


def _event(payload: Mapping[str, Any]) -> bytes:
    # The Anthropic SDK drops events without an `event:` line, so every frame names its type.
    return f"event: {payload['type']}\ndata: {_json(payload)}\n\n".encode()


def openai_stream(
    turn: Turn,
    turn_index: int,
    *,
    model: str,
    usage: tuple[int, int],
    stream_id: str,
    include_usage: bool,
) -> StreamPlan:
    """Chat-completions chunks for a turn, as OpenAI streams them.

    Thinking goes out as `delta.reasoning_content` (the DeepSeek / llama.cpp / vLLM field); OpenAI
    itself never streams reasoning text. The usage chunk (empty `choices`) is sent only when the
    request asked for it with `stream_options.include_usage`, exactly as the real API does.
    """
    created = int(time.time())

    def chunk(delta: Mapping[str, Any], finish: str | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {
            "id": stream_id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "system_fingerprint": "fp_ioh_fake",
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
        }
        if include_usage:
            body["usage"] = None
        return body

    body = [Frame(_data(chunk({"role": "assistant", "content": "", "refusal": None})))]
    for piece in turn_pieces(turn, turn_index):
        if isinstance(piece, ThinkingPiece):
            delta: dict[str, Any] = {"reasoning_content": piece.text}
        elif isinstance(piece, TextPiece):
            delta = {"content": piece.text}
        elif piece.name is not None:
            call = {"name": piece.name, "arguments": piece.arguments}
            delta = {
                "tool_calls": [
                    {"index": piece.index, "id": piece.id, "type": "function", "function": call}
                ]
            }
        else:
            delta = {
                "tool_calls": [{"index": piece.index, "function": {"arguments": piece.arguments}}]
            }
        body.append(Frame(_data(chunk(delta)), piece=True))
    tail = [Frame(_data(chunk({}, "tool_calls" if turn.tool_calls else "stop")))]
    if include_usage:
        input_tokens, output_tokens = usage
        last = chunk({})
        last["choices"] = []
        last["usage"] = {
            "prompt_tokens": input_tokens,
            "completion_tokens": output_tokens,
            "total_tokens": input_tokens + output_tokens,
            "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0},
        }
        tail.append(Frame(_data(last)))
    tail.append(Frame(b"data: [DONE]\n\n"))
    return StreamPlan(tuple(body), tuple(tail))


def anthropic_stream(
    turn: Turn, turn_index: int, *, model: str, usage: tuple[int, int], stream_id: str
) -> StreamPlan:
    """Messages-API events for a turn: thinking, text and tool_use blocks, as Anthropic sends them.

    `message_start` reports `output_tokens: 1` as the real API does; the final count is in
    `message_delta` (cumulative, not to be added).
    """
    input_tokens, output_tokens = usage
    body = [
        Frame(
            _event(
                {
                    "type": "message_start",
                    "message": {
                        "id": stream_id,
                        "type": "message",
                        "role": "assistant",
                        "model": model,
                        "content": [],
                        "stop_reason": None,
                        "stop_sequence": None,
                        "usage": {
                            "input_tokens": input_tokens,
                            "output_tokens": 1,
                            "cache_creation_input_tokens": 0,
                            "cache_read_input_tokens": 0,
                        },
                    },
                }
            )
        ),
        Frame(_event({"type": "ping"})),
    ]
    body += _anthropic_blocks(turn, turn_index)
    stop = "tool_use" if turn.tool_calls else "end_turn"
    tail = (
        Frame(
            _event(
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": stop, "stop_sequence": None},
                    "usage": {"output_tokens": output_tokens},
                }
            )
        ),
        Frame(_event({"type": "message_stop"})),
    )
    return StreamPlan(tuple(body), tail)


def _anthropic_blocks(turn: Turn, turn_index: int) -> list[Frame]:
    frames: list[Frame] = []
    index = -1
    open_key: tuple[str, int] | None = None

    def close() -> None:
        if open_key is not None and open_key[0] == "thinking":
            delta = {"type": "signature_delta", "signature": fake_signature(turn.thinking)}
            frames.append(
                Frame(_event({"type": "content_block_delta", "index": index, "delta": delta}))
            )
        if open_key is not None:
            frames.append(Frame(_event({"type": "content_block_stop", "index": index})))

    def start(block: Mapping[str, Any], piece: bool = False) -> None:
        frames.append(
            Frame(
                _event({"type": "content_block_start", "index": index, "content_block": block}),
                piece=piece,
            )
        )

    def delta(value: Mapping[str, Any]) -> None:
        event = {"type": "content_block_delta", "index": index, "delta": value}
        frames.append(Frame(_event(event), piece=True))

    for piece in turn_pieces(turn, turn_index):
        if isinstance(piece, ThinkingPiece | TextPiece):
            kind = "thinking" if isinstance(piece, ThinkingPiece) else "text"
            if open_key != (kind, 0):
                close()
                index += 1
                open_key = (kind, 0)
                start({"type": kind, kind: "", **({"signature": ""} if kind == "thinking" else {})})
            delta({"type": f"{kind}_delta", kind: piece.text})
        elif piece.name is not None:
            close()
            index += 1
            open_key = ("tool_use", piece.index)
            start({"type": "tool_use", "id": piece.id, "name": piece.name, "input": {}}, True)
        else:
            delta({"type": "input_json_delta", "partial_json": piece.arguments})
    close()
    return frames


def stream_error_type(message: str) -> str:
    """The vendor type of a scripted mid-stream error.

    `overloaded_error` when its message speaks of overload, else `api_error`. The scripted
    provider classifies by it too, so a scripted `stream_error` is the same kind in-process and
    over either wire.
    """
    return "overloaded_error" if "overload" in message.lower() else "api_error"


def stream_error_frame(wire: str, message: str) -> bytes:
    """A mid-stream error event: OpenAI's top-level `error` data event, or Anthropic's `error`.

    Anthropic's type is `stream_error_type(message)`. OpenAI's is `server_error`; it has no type
    for overload, so an overload carries the HTTP-like code 529 instead, as OpenRouter sends it.
    """
    if wire == "openai":
        if stream_error_type(message) == "overloaded_error":
            return _data({"error": {"message": message, "code": 529}})
        return _data(
            {"error": {"message": message, "type": "server_error", "param": None, "code": None}}
        )
    error = {"type": stream_error_type(message), "message": message}
    return _event({"type": "error", "error": error})


_OPENAI_ERRORS = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("invalid_request_error", "unsupported_country_region_territory"),
    404: ("invalid_request_error", "model_not_found"),
    429: ("requests", "rate_limit_exceeded"),
}
_ANTHROPIC_ERRORS = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    504: "timeout_error",
    529: "overloaded_error",
}


def status_message(status: int) -> str:
    """The message of a scripted HTTP error (never naming the context window: that is not asked)."""
    try:
        phrase = HTTPStatus(status).phrase
    except ValueError:
        phrase = "Overloaded" if status == 529 else "Error"
    return f"scripted HTTP {status} ({phrase})"


def error_body(wire: str, status: int, message: str, request_id: str) -> bytes:
    """The provider's real JSON error body for an HTTP failure status."""
    if wire == "openai":
        kind, code = _OPENAI_ERRORS.get(
            status, ("server_error", None) if status >= 500 else ("invalid_request_error", None)
        )
        payload: dict[str, Any] = {
            "error": {"message": message, "type": kind, "param": None, "code": code}
        }
    else:
        kind = _ANTHROPIC_ERRORS.get(
            status, "api_error" if status >= 500 else "invalid_request_error"
        )
        payload = {
            "type": "error",
            "error": {"type": kind, "message": message},
            "request_id": request_id,
        }
    return _json(payload).encode()


def models_body(wire: str, model: str) -> bytes:
    """The model list (`GET /v1/models`): the scenario's one model."""
    if wire == "openai":
        entry = {"id": model, "object": "model", "created": 0, "owned_by": "ioh-tui"}
        return _json({"object": "list", "data": [entry]}).encode()
    entry = {
        "type": "model",
        "id": model,
        "display_name": model,
        "created_at": "2026-01-01T00:00:00Z",
    }
    return _json({"data": [entry], "has_more": False, "first_id": model, "last_id": model}).encode()


def _text(content: Any) -> str:
    """Text of a message content: a string, or the text parts of a list of parts/blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            p["text"]
            for p in content
            if isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("text"), str)
        )
    return ""


def _arguments(raw: Any) -> Mapping[str, Any]:
    if isinstance(raw, dict):
        return raw
    try:
        value = json.loads(raw) if isinstance(raw, str) and raw else {}
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def request_from_openai(body: Mapping[str, Any]) -> Request:
    """The transcript a chat-completions body carries (roles, text, tool calls)."""
    messages = []
    for raw in _dicts(body.get("messages")):
        role = raw.get("role")
        calls = tuple(
            ToolCall(str(c.get("id", "")), str(f.get("name", "")), _arguments(f.get("arguments")))
            for c in _dicts(raw.get("tool_calls"))
            for f in [_dict(c.get("function"))]
        )
        if role in ("system", "developer"):
            messages.append(Message("system", _text(raw.get("content"))))
        elif role in ("user", "assistant", "tool"):
            messages.append(Message(role, _text(raw.get("content")), calls))
    return Request(tuple(messages))


def request_from_anthropic(body: Mapping[str, Any]) -> Request:
    """The transcript a messages body carries; tool results become `tool` messages."""
    messages = []
    system = _text(body.get("system"))
    if system:
        messages.append(Message("system", system))
    for raw in _dicts(body.get("messages")):
        content = raw.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        if raw.get("role") == "assistant":
            calls = tuple(
                ToolCall(str(b.get("id", "")), str(b.get("name", "")), _arguments(b.get("input")))
                for b in _dicts(blocks)
                if b.get("type") == "tool_use"
            )
            messages.append(Message("assistant", _text(blocks), calls))
        elif raw.get("role") == "user":
            for block in _dicts(blocks):
                if block.get("type") == "tool_result":
                    messages.append(Message("tool", _text(block.get("content"))))
            text = _text(blocks)
            if text or not any(b.get("type") == "tool_result" for b in _dicts(blocks)):
                messages.append(Message("user", text))
    return Request(tuple(messages))


def first_user_text(request: Request) -> str:
    """Where the engine puts a run's goal: the text of the first user message."""
    return next((m.content for m in request.messages if m.role == "user"), "")


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _dicts(value: Any) -> Iterable[dict[str, Any]]:
    items: Sequence[Any] = value if isinstance(value, list) else []
    return [item for item in items if isinstance(item, dict)]

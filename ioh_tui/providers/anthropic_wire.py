"""The Anthropic Messages wire, HTTP-free: request bodies and a stream assembler.

Usage is reconciled with the OpenAI wire so counts mean the same everywhere: `input_tokens` is
the whole prompt (Anthropic's fresh `input_tokens` plus cache reads and cache writes), with the
cache counts as a breakdown of it. `message_delta` usage is cumulative, so later counts replace
earlier ones (never summed); OpenRouter's Anthropic endpoint sends `input_tokens: 0` in
`message_start` and the real count in `message_delta`, which this takes.

Deliberate differences from the official SDK: a stream that ends before `message_stop` is
`truncated` (the SDK returns a partial message); an event without an `event:` line is read by its
data's `type` (the SDK skips it); unknown event and delta types are ignored, as Anthropic's
versioning policy asks.
"""

from __future__ import annotations

import base64
import json
import re
import time
from collections.abc import Iterable
from typing import Any

from ioh_tui.core.errors import ProviderError
from ioh_tui.core.transcript import (
    Completion,
    Image,
    Message,
    Request,
    StreamSink,
    Thought,
    Usage,
)
from ioh_tui.providers.assemble import (
    Clock,
    PieceStream,
    TextShape,
    as_int,
    as_mapping,
    event_json,
)
from ioh_tui.providers.classify import classify_stream_error
from ioh_tui.providers.sse import ServerSentEvent

_UNSAFE_ID = re.compile(r"[^a-zA-Z0-9_-]")
_COUNTERS = (
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
)


def build_body(
    request: Request, model: str, *, thinking_budget: int | None = None
) -> dict[str, Any]:
    """The JSON body of a streaming Messages request.

    System messages become one `system` text block marked for prompt caching. Tool results
    become `tool_result` blocks of a user message; consecutive same-role messages merge into one
    (the API wants turns to alternate), with tool results ahead of any text.

    `thinking_budget` turns extended thinking on with that many tokens to think in, on top of
    the answer's `max_tokens` (the API counts both against `max_tokens`). An assistant turn's
    signed thinking blocks then go back ahead of its text and tool calls, as the API requires.
    """
    body: dict[str, Any] = {
        "model": request.model or model,
        "max_tokens": request.max_tokens + (thinking_budget or 0),
        "stream": True,
        "messages": _messages(request.messages, thoughts=thinking_budget is not None),
    }
    if thinking_budget is not None:
        body["thinking"] = {"type": "enabled", "budget_tokens": thinking_budget}
    system = "\n\n".join(m.content for m in request.messages if m.role == "system" and m.content)
    if system:
        body["system"] = [{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}]
    if request.tools:
        body["tools"] = [
            {"name": t.name, "description": t.description, "input_schema": dict(t.parameters)}
            for t in request.tools
        ]
    return body


def _messages(messages: Iterable[Message], *, thoughts: bool) -> list[dict[str, Any]]:
    turns: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "system":
            continue
        blocks = _blocks(message)
        if thoughts and message.thoughts:
            blocks[:0] = [_thought(t) for t in message.thoughts]
        if not blocks:
            continue
        role = "assistant" if message.role == "assistant" else "user"
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})
    for turn in turns:
        turn["content"].sort(key=lambda block: block["type"] != "tool_result")
    return turns


def _blocks(message: Message) -> list[dict[str, Any]]:
    if message.role == "tool":
        result: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": _safe_id(message.tool_call_id),
        }
        if message.images:
            # A tool result may hold image blocks: the image stays with the call that showed it.
            content: list[dict[str, Any]] = (
                [{"type": "text", "text": message.content}] if message.content else []
            )
            content.extend(_image(image) for image in message.images)
            result["content"] = content
        elif message.content:
            result["content"] = message.content
        return [result]
    # The API refuses empty text blocks.
    blocks: list[dict[str, Any]] = (
        [{"type": "text", "text": message.content}] if message.content else []
    )
    blocks.extend(
        {"type": "tool_use", "id": _safe_id(c.id), "name": c.name, "input": dict(c.arguments)}
        for c in message.tool_calls
    )
    return blocks


def _thought(thought: Thought) -> dict[str, Any]:
    if thought.redacted:
        return {"type": "redacted_thinking", "data": thought.redacted}
    return {"type": "thinking", "thinking": thought.text, "signature": thought.signature}


def _image(image: Image) -> dict[str, Any]:
    data = base64.b64encode(image.data).decode("ascii")
    return {
        "type": "image",
        "source": {"type": "base64", "media_type": image.media_type, "data": data},
    }


def _safe_id(call_id: str | None) -> str:
    # Tool ids from other wires may hold characters Anthropic refuses; the same mapping is applied
    # to a call and to its result, so they still pair up.
    return _UNSAFE_ID.sub("_", call_id or "") or "toolu_unknown"


class AnthropicAssembler:
    """Consumes decoded events of one stream; `feed` until it returns True, then `finish`."""

    def __init__(
        self,
        on_piece: StreamSink | None = None,
        *,
        used_ids: Iterable[str] = (),
        started: float | None = None,
        clock: Clock = time.monotonic,
    ) -> None:
        self._out = PieceStream(on_piece, used_ids=used_ids, started=started, clock=clock)
        self.model: str | None = None
        self.stop_reason: str | None = None
        self._thought_parts: dict[int, list[str]] = {}
        """Each thinking block's text, by the block's index."""
        self._signatures: dict[int, str] = {}
        self._redacted: dict[int, str] = {}
        """Each redacted thinking block's opaque data, by the block's index."""
        self.done = False
        self._counters: dict[str, int] | None = None
        self._start_inputs: dict[int, str] = {}
        self._shape = TextShape()

    @property
    def signature(self) -> str:
        """The signatures of the turn's thinking blocks, joined."""
        return "".join(self._signatures[i] for i in sorted(self._signatures))

    def _thoughts_in_order(self) -> tuple[Thought, ...]:
        blocks = {
            i: Thought("".join(self._thought_parts.get(i, ())), signature)
            for i, signature in self._signatures.items()
        }
        blocks.update((i, Thought(redacted=data)) for i, data in self._redacted.items())
        # A block with neither a signature nor redacted data cannot be sent back: left out.
        return tuple(b for _, b in sorted(blocks.items()) if b.signature or b.redacted)

    def feed(self, event: ServerSentEvent) -> bool:
        """Take one event; True once `message_stop` arrived (stop reading)."""
        if self._shape.streamed(event.data, self._out):
            return False
        return self._decoded(event)

    def feed_all(self, events: Iterable[ServerSentEvent]) -> bool:
        """`feed` of each of a network chunk's events, in one call; True once `message_stop`."""
        return self._shape.feed_all(events, self._out, self._decoded)

    def _decoded(self, event: ServerSentEvent) -> bool:
        """`feed`'s full path: the event's JSON decoded and every field looked at."""
        obj = event_json(event.data)
        if obj is None:
            return False
        kind = obj.get("type")
        if not isinstance(kind, str):
            kind = event.event
        if kind == "content_block_delta":
            self._delta(obj)
            text = _text_only(obj)
            if text is not None:
                self._shape.learn(event.data, text, _text_of)
        elif kind == "content_block_start":
            self._block_start(obj)
        elif kind == "message_start":
            message = as_mapping(obj.get("message"))
            if isinstance(message.get("model"), str):
                self.model = message["model"]
            self._count(message.get("usage"))
        elif kind == "message_delta":
            reason = as_mapping(obj.get("delta")).get("stop_reason")
            if isinstance(reason, str) and reason:
                self.stop_reason = reason
            self._count(obj.get("usage"))
        elif kind == "message_stop":
            self.done = True
        elif kind == "error":
            error = as_mapping(obj.get("error"))
            said = error.get("message")
            text = said if isinstance(said, str) else ""
            raise classify_stream_error(text, error.get("type"))
        return self.done

    def finish(self) -> Completion:
        """The completion; raises `truncated` if `message_stop` never came, `malformed` if empty."""
        if not self.done:
            raise ProviderError("truncated", "the stream ended before message_stop")
        out = self._out
        for key, raw in self._start_inputs.items():
            # A block that came whole in content_block_start and got no input deltas.
            out.tool_calls.fragment(key, arguments=raw)
        text = "".join(out.text_parts)
        thinking = "".join(out.thinking_parts)
        calls = out.tool_calls.finish()
        usage = self._usage()
        if not text and not thinking and not calls and usage is None:
            raise ProviderError("malformed", "the stream finished with no content and no usage")
        ttft, latency = out.timing()
        return Completion(
            text=text,
            thinking=thinking,
            tool_calls=calls,
            usage=usage,
            stop_reason=self.stop_reason,
            model=self.model,
            ttft_ms=ttft,
            latency_ms=latency,
            thoughts=self._thoughts_in_order(),
        )

    def _block_start(self, obj: dict[str, Any]) -> None:
        index = obj.get("index")
        block = as_mapping(obj.get("content_block"))
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str) and block["text"]:
            self._out.text(block["text"])
        elif kind == "thinking":
            key = index if isinstance(index, int) else -1
            if isinstance(block.get("thinking"), str) and block["thinking"]:
                self._out.thinking(block["thinking"])
                self._thought_parts.setdefault(key, []).append(block["thinking"])
            if isinstance(block.get("signature"), str):
                self._signatures[key] = self._signatures.get(key, "") + block["signature"]
        elif kind == "redacted_thinking" and isinstance(index, int):
            data = block.get("data")
            if isinstance(data, str) and data:
                self._redacted[index] = data
        elif kind == "tool_use" and isinstance(index, int):
            wire_id = block.get("id")
            name = block.get("name")
            self._out.tool_calls.fragment(
                index,
                wire_id=wire_id if isinstance(wire_id, str) else None,
                name=name if isinstance(name, str) else None,
            )
            start_input = block.get("input")
            if isinstance(start_input, dict) and start_input:
                self._start_inputs[index] = json.dumps(start_input)

    def _delta(self, obj: dict[str, Any]) -> None:
        delta = as_mapping(obj.get("delta"))
        kind = delta.get("type")
        if kind == "text_delta":
            text = delta.get("text")
            if isinstance(text, str) and text:
                self._out.text(text)
        elif kind == "input_json_delta":
            index = obj.get("index")
            partial = delta.get("partial_json")
            if isinstance(index, int) and isinstance(partial, str):
                self._start_inputs.pop(index, None)
                if partial or index not in self._out.tool_calls:
                    self._out.tool_calls.fragment(index, arguments=partial)
        elif kind == "thinking_delta":
            thinking = delta.get("thinking")
            if isinstance(thinking, str) and thinking:
                self._out.thinking(thinking)
                self._thought_parts.setdefault(_index(obj), []).append(thinking)
        elif kind == "signature_delta" and isinstance(delta.get("signature"), str):
            key = _index(obj)
            self._signatures[key] = self._signatures.get(key, "") + delta["signature"]

    def _count(self, usage: object) -> None:
        if not isinstance(usage, dict):
            return
        if self._counters is None:
            self._counters = dict.fromkeys(_COUNTERS, 0)
        for key in _COUNTERS:
            value = usage.get(key)
            if value is not None:
                # Cumulative counts: the latest report stands, as in the official SDK (a refusal
                # says `output_tokens: 0` after `message_start` said 1).
                self._counters[key] = as_int(value)

    def _usage(self) -> Usage | None:
        counts = self._counters
        if counts is None:
            return None
        read = counts["cache_read_input_tokens"]
        write = counts["cache_creation_input_tokens"]
        return Usage(
            input_tokens=counts["input_tokens"] + read + write,
            output_tokens=counts["output_tokens"],
            cache_read_tokens=read,
            cache_write_tokens=write,
        )


def _index(obj: dict[str, Any]) -> int:
    """The block index an event names (-1 when it names none)."""
    index = obj.get("index")
    return index if isinstance(index, int) else -1


def _text_only(obj: dict[str, Any]) -> str | None:
    """The text of a text delta that names its own type (so the SSE event name is moot)."""
    if obj.get("type") != "content_block_delta":
        return None
    delta = as_mapping(obj.get("delta"))
    text = delta.get("text")
    return text if delta.get("type") == "text_delta" and isinstance(text, str) else None


def _text_of(obj: dict[str, Any]) -> object:
    """`delta.text` of a decoded event, or None."""
    return as_mapping(obj.get("delta")).get("text")

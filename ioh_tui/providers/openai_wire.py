"""The OpenAI Chat Completions wire, HTTP-free: request bodies and a stream assembler.

Also spoken by OpenRouter, Ollama, vLLM, llama.cpp, LM Studio and the other compatible servers;
their quirks are absorbed here: `reasoning` or `reasoning_content`, OpenRouter's usage chunk with
`cost` (and non-empty `choices`), llama.cpp `timings`, the role repeated in every chunk, a whole
tool call in one chunk, tool fragments without `index` (older Ollama), ids that repeat.

Stricter than the official SDK on purpose: a stream that ends before `[DONE]` or before a
`finish_reason` is `truncated` (the SDK returns what it has with no error), and vLLM's
`{"object": "error"}` mid-stream shape is an error, as is OpenAI's top-level `error`.
"""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Iterable
from typing import Any, Literal

from ioh_tui.core.errors import ProviderError
from ioh_tui.core.transcript import (
    Completion,
    Image,
    Message,
    Request,
    StreamSink,
    ToolCall,
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

Flavour = Literal["openai", "openrouter", "compatible"]


def build_body(
    request: Request, model: str, *, flavour: Flavour = "openai", effort: str | None = None
) -> dict[str, Any]:
    """The JSON body of a streaming chat-completions request.

    OpenAI itself takes `max_completion_tokens` (its reasoning models refuse `max_tokens`);
    OpenRouter and local servers take `max_tokens`. OpenRouter gets a prompt-cache marker on the
    system prompt, which it forwards to the models that cache and drops for the others.
    `effort` (`low`, `medium`, `high`) is sent as `reasoning_effort`, or to OpenRouter as
    `reasoning.effort`, its unified form for every model that reasons.
    """
    body: dict[str, Any] = {
        "model": request.model or model,
        "stream": True,
        "stream_options": {"include_usage": True},
        "messages": _messages(request.messages, flavour),
    }
    limit_key = "max_completion_tokens" if flavour == "openai" else "max_tokens"
    body[limit_key] = request.max_tokens
    if effort is not None and flavour == "openrouter":
        body["reasoning"] = {"effort": effort}
    elif effort is not None:
        body["reasoning_effort"] = effort
    if request.tools:
        body["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": t.name,
                    "description": t.description,
                    "parameters": dict(t.parameters),
                },
            }
            for t in request.tools
        ]
    return body


def _messages(messages: Iterable[Message], flavour: Flavour) -> list[dict[str, Any]]:
    """The wire messages; tool results' images follow them in one user message.

    A chat-completions `tool` message carries text only, and the results of one assistant turn's
    calls must follow it with nothing between them: so their images go in a user message after
    the last of them, each named after its result's text.
    """
    out: list[dict[str, Any]] = []
    images: list[Image] = []
    for message in messages:
        if message.role != "tool" and images:
            out.append(image_turn(images))
            images = []
        out.append(_message(message, flavour))
        if message.role == "tool":
            images.extend(message.images)
    if images:
        out.append(image_turn(images))
    return out


def image_turn(images: Iterable[Image]) -> dict[str, Any]:
    """The user message showing tool results' images: a line naming each, then each image."""
    shown = list(images)
    names = "; ".join(image.describe() for image in shown)
    parts: list[dict[str, Any]] = [
        {"type": "text", "text": f"[images from the tool results above: {names}]"}
    ]
    parts.extend({"type": "image_url", "image_url": {"url": data_url(image)}} for image in shown)
    return {"role": "user", "content": parts}


def data_url(image: Image) -> str:
    """The image as a `data:` URL, the form chat completions take inline."""
    return f"data:{image.media_type};base64,{base64.b64encode(image.data).decode('ascii')}"


def _message(message: Message, flavour: Flavour) -> dict[str, Any]:
    if message.role == "tool":
        return {
            "role": "tool",
            "tool_call_id": message.tool_call_id or "",
            "content": message.content,
        }
    if message.role == "assistant" and message.tool_calls:
        return {
            "role": "assistant",
            "content": message.content or None,
            "tool_calls": [_call(c) for c in message.tool_calls],
        }
    if message.role == "system" and flavour == "openrouter":
        part = {"type": "text", "text": message.content, "cache_control": {"type": "ephemeral"}}
        return {"role": "system", "content": [part]}
    return {"role": message.role, "content": message.content}


def _call(call: ToolCall) -> dict[str, Any]:
    # Arguments that never parsed go back verbatim, so the model sees what it actually sent.
    arguments = call.arguments_error if call.arguments_error is not None else call.arguments
    text = arguments if isinstance(arguments, str) else json.dumps(dict(arguments))
    return {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": text}}


class OpenAIAssembler:
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
        self.refusal = ""
        self.done = False
        self._usage: Usage | None = None
        self._timings: dict[str, Any] | None = None
        self._key_by_id: dict[str, int] = {}
        self._last_key: int | None = None
        self._shape = TextShape()

    def feed(self, event: ServerSentEvent) -> bool:
        """Take one event; True once `[DONE]` arrived (stop reading)."""
        if self._shape.streamed(event.data, self._out):
            return False
        return self._decoded(event.data)

    def feed_all(self, events: Iterable[ServerSentEvent]) -> bool:
        """`feed` of each of a network chunk's events, in one call; True once `[DONE]` arrived."""
        return self._shape.feed_all(events, self._out, lambda event: self._decoded(event.data))

    def _decoded(self, data: str) -> bool:
        """`feed`'s full path: the chunk's JSON decoded and every field looked at."""
        if data.startswith("[DONE]"):
            self.done = True
            return True
        chunk = event_json(data)
        if chunk is None:
            return False
        if chunk.get("error") or chunk.get("object") == "error":
            raise _chunk_error(chunk)
        if self.model is None and isinstance(chunk.get("model"), str) and chunk["model"]:
            self.model = chunk["model"]
        choices = chunk.get("choices")
        if choices:
            for choice in choices:
                if isinstance(choice, dict) and choice.get("index", 0) == 0:
                    self._choice(choice)
        usage = chunk.get("usage")
        if isinstance(usage, dict):
            self._usage = usage_from_openai(usage)
        timings = chunk.get("timings")
        if isinstance(timings, dict):
            self._timings = timings
        text = _text_only(chunk)
        if text is not None:
            self._shape.learn(data, text, _text_of)
        return False

    def finish(self) -> Completion:
        """The completion; raises `truncated` if the stream never finished, `malformed` if empty."""
        if not self.done:
            raise ProviderError("truncated", "the stream ended before [DONE]")
        if self.stop_reason is None:
            raise ProviderError("truncated", "the stream ended without a finish_reason")
        out = self._out
        text = "".join(out.text_parts)
        thinking = "".join(out.thinking_parts)
        calls = out.tool_calls.finish()
        usage = self._usage
        if usage is None and self._timings is not None:
            usage = _usage_from_timings(self._timings)
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
        )

    def _choice(self, choice: dict[str, Any]) -> None:
        delta = choice.get("delta")
        if isinstance(delta, dict):
            content = delta.get("content")
            if isinstance(content, str) and content:
                self._out.text(content)
            reasoning = delta.get("reasoning") or delta.get("reasoning_content")
            if isinstance(reasoning, str) and reasoning:
                self._out.thinking(reasoning)
            refusal = delta.get("refusal")
            if isinstance(refusal, str) and refusal:
                # A refusal is the answer the user sees; it streams as text and is kept apart too.
                self.refusal += refusal
                self._out.text(refusal)
            calls = delta.get("tool_calls")
            if isinstance(calls, list):
                for fragment in calls:
                    if isinstance(fragment, dict):
                        self._fragment(fragment)
        finish = choice.get("finish_reason")
        if isinstance(finish, str) and finish:
            self.stop_reason = finish

    def _fragment(self, fragment: dict[str, Any]) -> None:
        function = as_mapping(fragment.get("function"))
        wire_id = fragment.get("id") if isinstance(fragment.get("id"), str) else None
        key = fragment.get("index")
        if isinstance(key, bool) or not isinstance(key, int):
            key = self._key_without_index(wire_id)
        if wire_id:
            self._key_by_id.setdefault(wire_id, key)
        self._last_key = key
        name = function.get("name")
        arguments = function.get("arguments")
        if isinstance(arguments, dict):
            arguments = json.dumps(arguments)
        self._out.tool_calls.fragment(
            key,
            wire_id=wire_id,
            name=name if isinstance(name, str) else None,
            arguments=arguments if isinstance(arguments, str) else "",
        )

    def _key_without_index(self, wire_id: str | None) -> int:
        # Older Ollama builds send no index: a new id opens a call, no id continues the last one.
        if wire_id is not None and wire_id in self._key_by_id:
            return self._key_by_id[wire_id]
        if wire_id is None and self._last_key is not None:
            return self._last_key
        key = len(self._out.tool_calls)
        while key in self._out.tool_calls:
            key += 1
        return key


def _text_only(chunk: dict[str, Any]) -> str | None:
    """The text of a chunk whose only effect on `feed` is its text (whatever the text), or None."""
    if chunk.get("error") or chunk.get("object") == "error":
        return None
    if isinstance(chunk.get("usage"), dict) or isinstance(chunk.get("timings"), dict):
        return None
    choices = chunk.get("choices")
    if not isinstance(choices, list) or len(choices) != 1:
        return None
    choice = choices[0]
    if not isinstance(choice, dict) or choice.get("index", 0) != 0 or choice.get("finish_reason"):
        return None
    delta = choice.get("delta")
    if not isinstance(delta, dict) or any(
        delta.get(key) for key in ("reasoning", "reasoning_content", "refusal", "tool_calls")
    ):
        return None
    content = delta.get("content")
    return content if isinstance(content, str) else None


def _text_of(chunk: dict[str, Any]) -> object:
    """`choices[0].delta.content` of a decoded chunk, or None."""
    choices = chunk.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return None
    return as_mapping(choices[0].get("delta")).get("content")


def usage_from_openai(usage: dict[str, Any]) -> Usage:
    """Our usage from an OpenAI-shaped `usage` object (OpenRouter's `cost` included)."""
    prompt = as_mapping(usage.get("prompt_tokens_details"))
    completion = as_mapping(usage.get("completion_tokens_details"))
    cost = usage.get("cost")
    return Usage(
        input_tokens=as_int(usage.get("prompt_tokens")),
        output_tokens=as_int(usage.get("completion_tokens")),
        cache_read_tokens=as_int(prompt.get("cached_tokens")),
        cache_write_tokens=as_int(prompt.get("cache_write_tokens")),
        reasoning_tokens=as_int(completion.get("reasoning_tokens")),
        cost_usd=float(cost)
        if isinstance(cost, int | float) and not isinstance(cost, bool)
        else None,
    )


def _usage_from_timings(timings: dict[str, Any]) -> Usage:
    # llama.cpp without include_usage support: its own counters are the only report there is.
    cached = as_int(timings.get("cache_n"))
    return Usage(
        input_tokens=as_int(timings.get("prompt_n")) + cached,
        output_tokens=as_int(timings.get("predicted_n")),
        cache_read_tokens=cached,
    )


def _chunk_error(chunk: dict[str, Any]) -> ProviderError:
    error = chunk.get("error")
    if not isinstance(error, dict):
        # vLLM puts the error fields at the top level of the chunk.
        error = chunk
    message = error.get("message")
    text = message if isinstance(message, str) else ""
    return classify_stream_error(text, error.get("type"), error.get("code"))

"""A whole answer read as the stream it stands for.

Some servers (gateways, older local servers) ignore `stream: true` and answer with the whole
completion as one JSON object. Rather than failing, the object is turned into the events the
stream would have carried, and the wire's own assembler reads them: every check and quirk the
stream gets (ids, arguments, usage, thinking) applies to it too. Its text arrives as one piece.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx

from ioh_tui.core.errors import ProviderError
from ioh_tui.providers.classify import error_summary
from ioh_tui.providers.sse import ServerSentEvent

WHOLE_BYTES = 16 * 1024 * 1024
"""The largest whole (non-streamed) answer read."""
_SHOWN_BYTES = 16 * 1024
"""At most this much of a 200 that is not a completion is said, to say what it was."""
_SHOWN_CHARS = 300


def answers_json(response: httpx.Response) -> bool:
    """Whether a 200 says it is JSON.

    Anything else (no type, `text/plain`) is read as a stream: some compatible servers stream
    under the wrong type, and the stream's own checks catch the rest (no terminator: `truncated`).
    """
    media: str = response.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    return media == "application/json" or media.endswith("+json")


async def read_whole(
    response: httpx.Response, events_of: Callable[[Any], list[ServerSentEvent] | None]
) -> list[ServerSentEvent]:
    """A 200 in JSON as the events of the stream it stands for (`events_of`: the wire's).

    Raises:
        ProviderError: `malformed`, not retried: the body is no completion (a server's error put
            in a success), or is past `WHOLE_BYTES`. The caller masks the key in its message.
    """
    raw = bytearray()
    async for chunk in response.aiter_bytes():
        raw += chunk
        if len(raw) > WHOLE_BYTES:
            break
    try:
        whole = json.loads(raw) if len(raw) <= WHOLE_BYTES else None
    except ValueError:
        whole = None
    events = events_of(whole)
    if events is not None:
        return events
    media = response.headers.get("content-type", "").split(";", 1)[0].strip()
    summary = error_summary(raw[:_SHOWN_BYTES].decode("utf-8", "replace")).strip()
    if len(summary) > _SHOWN_CHARS:
        summary = summary[:_SHOWN_CHARS] + "..."
    said = f"the server answered {media} that is not a completion, and not an event stream"
    raise ProviderError(
        "malformed", f"{said}: {summary}" if summary else said, status=200, retryable=False
    )


def openai_events(whole: Any) -> list[ServerSentEvent] | None:
    """A `chat.completion` object as its chunk and `[DONE]`; None when it is not one."""
    choices = whole.get("choices") if isinstance(whole, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return None
    choice = choices[0]
    message = choice.get("message")
    if not isinstance(message, dict):
        return None
    delta = {key: value for key, value in message.items() if key != "tool_calls"}
    calls = message.get("tool_calls")
    if isinstance(calls, list):
        delta["tool_calls"] = [
            {**call, "index": index} for index, call in enumerate(calls) if isinstance(call, dict)
        ]
    chunk = {
        "id": whole.get("id"),
        "model": whole.get("model"),
        "choices": [{"index": 0, "delta": delta, "finish_reason": choice.get("finish_reason")}],
    }
    if isinstance(whole.get("usage"), dict):
        chunk["usage"] = whole["usage"]
    return [ServerSentEvent(data=json.dumps(chunk)), ServerSentEvent(data="[DONE]")]


def anthropic_events(whole: Any) -> list[ServerSentEvent] | None:
    """A Messages `message` object as its stream's events; None when it is not one."""
    if not isinstance(whole, dict) or whole.get("type") != "message":
        return None
    content = whole.get("content")
    if not isinstance(content, list):
        return None
    given = whole.get("usage")
    usage: dict[str, Any] = given if isinstance(given, dict) else {}
    events: list[dict[str, Any]] = [
        {"type": "message_start", "message": {"model": whole.get("model"), "usage": usage}}
    ]
    for index, block in enumerate(content):
        events.append({"type": "content_block_start", "index": index, "content_block": block})
        events.append({"type": "content_block_stop", "index": index})
    events.append(
        {
            "type": "message_delta",
            "delta": {"stop_reason": whole.get("stop_reason")},
            "usage": {"output_tokens": usage.get("output_tokens", 0)},
        }
    )
    events.append({"type": "message_stop"})
    return [ServerSentEvent(event=e["type"], data=json.dumps(e)) for e in events]

"""Tool results' images on each wire, checked against the official SDKs' request types.

The SDKs' message parameter types are TypedDicts; pydantic validates a body against them, and
`conform` walks the lazily validated lists so every part is checked too.
"""

from __future__ import annotations

import base64
import functools
from typing import Any

import pytest

from ioh_tui.core.transcript import Image, Message, Request, ToolCall
from ioh_tui.providers import anthropic_wire, openai_wire

pydantic = pytest.importorskip("pydantic")
chat = pytest.importorskip("openai.types.chat", reason="the openai SDK (test oracle) is missing")
messages_types = pytest.importorskip("anthropic.types", reason="the anthropic SDK is missing")

PNG = Image("image/png", b"\x89PNG-one", "a.png", 4, 3)
GIF = Image("image/gif", b"GIF89a-two", "fx/draw image 1", 2, 2)


@functools.cache
def sdk_type(kind: str) -> Any:
    """The SDK's message type as a validator (built once: it takes seconds)."""
    typ = chat.ChatCompletionMessageParam if kind == "openai" else messages_types.MessageParam
    return pydantic.TypeAdapter(typ)


def conform(adapter: Any, value: dict[str, Any]) -> None:
    """Validate `value` (raises when it is not of the SDK's type), lists included."""

    def force(x: Any) -> Any:
        if isinstance(x, dict):
            return {k: force(v) for k, v in x.items()}
        if isinstance(x, str | bytes | int | float | type(None)):
            return x
        return [force(i) for i in x]

    force(adapter.validate_python(value))


def transcript() -> Request:
    calls = (ToolCall("c1", "view_image", {"path": "a.png"}), ToolCall("c2", "mcp__fx__draw", {}))
    return Request(
        (
            Message("system", "S"),
            Message("user", "look"),
            Message("assistant", "", calls),
            Message("tool", "[view_image a.png] shown", tool_call_id="c1", images=(PNG,)),
            Message("tool", "[image: image/gif] shown", tool_call_id="c2", images=(GIF,)),
            Message("user", "[operator] and then?"),
        )
    )


def url(image: Image) -> str:
    return f"data:{image.media_type};base64,{base64.b64encode(image.data).decode()}"


@pytest.mark.parametrize("flavour", ["openai", "openrouter", "compatible"])
def test_chat_completions_images_follow_the_tool_results_in_a_user_message(flavour: Any) -> None:
    body = openai_wire.build_body(transcript(), "gpt-4o", flavour=flavour)
    sent = body["messages"]
    for message in sent:
        conform(sdk_type("openai"), message)
    roles = [m["role"] for m in sent]
    assert roles == ["system", "user", "assistant", "tool", "tool", "user", "user"]
    # The tool messages stay text (the API takes no image there) and follow their call at once.
    assert sent[3]["content"] == "[view_image a.png] shown"
    assert sent[5]["content"] == [
        {
            "type": "text",
            "text": "[images from the tool results above: a.png (image/png, 8 bytes, 4x3); "
            "fx/draw image 1 (image/gif, 10 bytes, 2x2)]",
        },
        {"type": "image_url", "image_url": {"url": url(PNG)}},
        {"type": "image_url", "image_url": {"url": url(GIF)}},
    ]
    assert sent[6] == {"role": "user", "content": "[operator] and then?"}


def test_chat_completions_with_the_images_last() -> None:
    request = Request(transcript().messages[:5])
    sent = openai_wire.build_body(request, "gpt-4o")["messages"]
    assert sent[-1]["role"] == "user" and len(sent[-1]["content"]) == 3


def test_a_tool_message_as_the_sdk_would_refuse_it_is_refused_by_the_oracle() -> None:
    # The check that the oracle bites: an image part inside a tool message is not the SDK's type.
    bad = {
        "role": "tool",
        "tool_call_id": "c1",
        "content": [{"type": "image_url", "image_url": {}}],
    }
    with pytest.raises(pydantic.ValidationError):
        conform(sdk_type("openai"), bad)


def test_anthropic_images_ride_in_their_tool_result() -> None:
    body = anthropic_wire.build_body(transcript(), "claude-sonnet-4")
    for message in body["messages"]:
        conform(sdk_type("anthropic"), message)
    results = body["messages"][2]["content"]
    assert results[0] == {
        "type": "tool_result",
        "tool_use_id": "c1",
        "content": [
            {"type": "text", "text": "[view_image a.png] shown"},
            {
                "type": "image",
                "source": {
                    "type": "base64",
                    "media_type": "image/png",
                    "data": base64.b64encode(PNG.data).decode(),
                },
            },
        ],
    }
    assert results[1]["content"][1]["source"]["media_type"] == "image/gif"
    assert results[2] == {"type": "text", "text": "[operator] and then?"}

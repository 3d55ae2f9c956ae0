"""The fake server's wire encoders, checked without a socket: any turn decodes back to itself."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from ioh_tui.core.transcript import Message, Request, ToolCall
from ioh_tui.providers.testing import fake_wire
from ioh_tui.providers.testing.scenario import ScriptedCall, Turn, turn_pieces, turn_usage

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)
calls = st.builds(
    ScriptedCall,
    name=st.from_regex(r"[a-z_]{1,12}", fullmatch=True),
    arguments=st.dictionaries(st.text(max_size=6), json_values, max_size=4),
)
turns = st.builds(
    Turn,
    text=st.text(max_size=60),
    thinking=st.text(max_size=40),
    tool_calls=st.lists(calls, max_size=3).map(tuple),
)


def events(frames: tuple[fake_wire.Frame, ...]) -> list[tuple[str | None, Any]]:
    out: list[tuple[str | None, Any]] = []
    for frame in frames:
        lines = frame.data.decode().split("\n")
        assert frame.data.endswith(b"\n\n"), "every event is terminated"
        name = lines[0][7:] if lines[0].startswith("event: ") else None
        data = next(line[6:] for line in lines if line.startswith("data: "))
        out.append((name, None if data == "[DONE]" else json.loads(data)))
    return out


@given(turns, st.integers(0, 5))
def test_openai_chunks_reassemble_to_the_turn(turn: Turn, index: int) -> None:
    plan = fake_wire.openai_stream(
        turn, index, model="m", usage=(3, 4), stream_id="chatcmpl-x", include_usage=True
    )
    assert sum(f.piece for f in plan.body) == len(turn_pieces(turn, index))
    text, thinking = "", ""
    calls: dict[int, dict[str, Any]] = {}
    decoded = events(plan.body + plan.tail)
    for name, chunk in decoded[:-2]:
        assert name is None
        delta = chunk["choices"][0]["delta"]
        text += delta.get("content") or ""
        thinking += delta.get("reasoning_content") or ""
        for fragment in delta.get("tool_calls", []):
            entry = calls.setdefault(fragment["index"], {"name": None, "arguments": ""})
            if "id" in fragment:
                assert entry["name"] is None, "id and name come once, on the first fragment"
                entry["name"] = fragment["function"]["name"]
            entry["arguments"] += fragment["function"]["arguments"]
    assert (text, thinking) == (turn.text, turn.thinking)
    assert [(c["name"], json.loads(c["arguments"])) for _, c in sorted(calls.items())] == [
        (c.name, c.arguments) for c in turn.tool_calls
    ]
    assert decoded[-3][1]["choices"][0]["finish_reason"] == (
        "tool_calls" if turn.tool_calls else "stop"
    )
    assert decoded[-2][1]["choices"] == []
    assert decoded[-2][1]["usage"]["total_tokens"] == 7
    assert decoded[-1] == (None, None)


@given(turns, st.integers(0, 5))
def test_anthropic_blocks_reassemble_to_the_turn(turn: Turn, index: int) -> None:
    plan = fake_wire.anthropic_stream(turn, index, model="m", usage=(3, 4), stream_id="msg_x")
    assert sum(f.piece for f in plan.body) == len(turn_pieces(turn, index))
    decoded = events(plan.body + plan.tail)
    assert all(name == data["type"] for name, data in decoded)
    blocks: list[dict[str, Any]] = []
    open_index = None
    for _, data in decoded:
        if data["type"] == "content_block_start":
            assert open_index is None and data["index"] == len(blocks)
            open_index = data["index"]
            blocks.append({**data["content_block"], "json": ""})
        elif data["type"] == "content_block_delta":
            assert data["index"] == open_index
            delta, block = data["delta"], blocks[data["index"]]
            if delta["type"] == "input_json_delta":
                block["json"] += delta["partial_json"]
            elif delta["type"] == "signature_delta":
                block["signature"] = delta["signature"]
            else:
                block[block["type"]] += delta[block["type"]]
        elif data["type"] == "content_block_stop":
            assert data["index"] == open_index
            open_index = None
    assert open_index is None
    assert "".join(b["thinking"] for b in blocks if b["type"] == "thinking") == turn.thinking
    assert all(b["signature"] for b in blocks if b["type"] == "thinking")
    assert "".join(b["text"] for b in blocks if b["type"] == "text") == turn.text
    tools = [(b["name"], json.loads(b["json"])) for b in blocks if b["type"] == "tool_use"]
    assert tools == [(c.name, c.arguments) for c in turn.tool_calls]
    assert decoded[-2][1]["delta"]["stop_reason"] == ("tool_use" if turn.tool_calls else "end_turn")
    assert decoded[-2][1]["usage"]["output_tokens"] == 4


def test_error_bodies_have_the_providers_real_shapes() -> None:
    openai = json.loads(fake_wire.error_body("openai", 429, "slow down", "req_1"))
    assert openai == {
        "error": {
            "message": "slow down",
            "type": "requests",
            "param": None,
            "code": "rate_limit_exceeded",
        }
    }
    assert json.loads(fake_wire.error_body("openai", 502, "x", "r"))["error"]["type"] == (
        "server_error"
    )
    kinds = {
        status: json.loads(fake_wire.error_body("anthropic", status, "x", "r"))["error"]["type"]
        for status in (400, 401, 403, 404, 413, 429, 500, 529)
    }
    assert kinds == {
        400: "invalid_request_error",
        401: "authentication_error",
        403: "permission_error",
        404: "not_found_error",
        413: "request_too_large",
        429: "rate_limit_error",
        500: "api_error",
        529: "overloaded_error",
    }


def test_status_messages_never_look_like_a_context_overflow() -> None:
    markers = ("context", "too many tokens", "too long", "maximum")
    for status in (400, 413, 422):
        assert not any(m in fake_wire.status_message(status).lower() for m in markers)


@given(
    st.text(max_size=30), st.text(max_size=30), st.dictionaries(st.text(max_size=4), st.integers())
)
def test_both_wires_decode_to_the_same_usage_estimate_as_the_transcript(
    goal: str, answer: str, arguments: dict[str, int]
) -> None:
    request = Request(
        (
            Message("system", "sys"),
            Message("user", goal),
            Message("assistant", answer, (ToolCall("c1", "read_file", arguments),)),
            Message("tool", "result text", tool_call_id="c1"),
        )
    )
    openai = {
        "messages": [
            {"role": "system", "content": "sys"},
            {"role": "user", "content": [{"type": "text", "text": goal}]},
            {
                "role": "assistant",
                "content": answer or None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "function": {"name": "read_file", "arguments": json.dumps(arguments)},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "result text"},
        ]
    }
    anthropic = {
        "system": [{"type": "text", "text": "sys"}],
        "messages": [
            {"role": "user", "content": goal},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": answer},
                    {"type": "tool_use", "id": "c1", "name": "read_file", "input": arguments},
                ],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "c1", "content": "result text"}],
            },
        ],
    }
    turn = Turn(text="x")
    expected = turn_usage(turn, request)
    for decoded in (
        fake_wire.request_from_openai(openai),
        fake_wire.request_from_anthropic(anthropic),
    ):
        assert turn_usage(turn, decoded) == expected
        assert sum(m.role == "assistant" for m in decoded.messages) == 1
        assert fake_wire.first_user_text(decoded) == goal

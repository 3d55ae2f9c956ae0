"""The one JSON form of completions and transcript messages (`core.codec`)."""

from __future__ import annotations

import json

from ioh_tui.core.codec import (
    completion_from_json,
    completion_to_json,
    message_from_json,
    message_to_json,
)
from ioh_tui.core.transcript import Completion, Image, Message, Thought, ToolCall, Usage

BROKEN = ToolCall("c2", "write_file", {}, arguments_error='{"path": "a.txt", "content": ')
COMPLETION = Completion(
    text="Writing it.",
    thinking="The file is missing.",
    tool_calls=(ToolCall("c1", "read_file", {"path": "a.txt"}), BROKEN),
    usage=Usage(120, 30, cache_read_tokens=100, reasoning_tokens=7, cost_usd=0.0012),
    stop_reason="tool_calls",
    model="m-1",
    ttft_ms=41.5,
    latency_ms=310.0,
)


def test_a_completion_with_an_argument_error_survives_json_text() -> None:
    text = json.dumps(completion_to_json(COMPLETION))
    assert completion_from_json(json.loads(text)) == COMPLETION


def test_the_argument_error_is_kept_under_the_key_stored_turns_use() -> None:
    (_, broken) = completion_to_json(COMPLETION)["tool_calls"]
    assert broken["error"] == BROKEN.arguments_error
    assert "arguments_error" not in broken


def test_a_recording_written_with_the_older_key_still_reads() -> None:
    data = {
        "text": "",
        "tool_calls": [{"id": "c", "name": "exec", "arguments": {}, "arguments_error": "argv="}],
    }
    (call,) = completion_from_json(data).tool_calls
    assert call.arguments_error == "argv="
    assert completion_from_json(data).usage is None


def test_a_message_with_tool_calls_survives_json_text() -> None:
    message = Message("assistant", "Two calls.", COMPLETION.tool_calls)
    answer = Message("tool", "[read a.txt]\nhello", tool_call_id="c1")
    shown = Image("image/gif", b"GIF89a\x00\xff", "a.gif", 1, 1)
    seen = Message("tool", "[view_image a.gif]", tool_call_id="c3", images=(shown,))
    for m in (message, answer, seen):
        assert message_from_json(json.loads(json.dumps(message_to_json(m)))) == m
    assert "images" not in message_to_json(answer)  # forms written before images are unchanged


def test_signed_thoughts_survive_json_text_and_older_forms_are_unchanged() -> None:
    thoughts = (Thought("Why.", "sig=="), Thought(redacted="opaque"))
    completion = Completion(text="Done.", thinking="Why.", thoughts=thoughts)
    assert (
        completion_from_json(json.loads(json.dumps(completion_to_json(completion)))) == completion
    )
    message = Message("assistant", "Done.", thoughts=thoughts)
    assert message_from_json(json.loads(json.dumps(message_to_json(message)))) == message
    assert message_to_json(message)["thoughts"] == [
        {"text": "Why.", "signature": "sig=="},
        {"redacted": "opaque"},
    ]
    # Recordings and stored turns written before thoughts existed keep their form.
    assert "thoughts" not in completion_to_json(COMPLETION)
    assert "thoughts" not in message_to_json(Message("assistant", "Done."))

"""The hook protocol's answers and payloads, and `match`, without running a hook."""

from __future__ import annotations

import json

import pytest

from ioh_tui.hooks import (
    BadAnswer,
    HookSet,
    PreAnswer,
    matches,
    payload_json,
    read_post,
    read_pre,
    read_stop,
)
from ioh_tui.hooks.protocol import MAX_PAYLOAD_CHARS


@pytest.mark.parametrize(
    ("stdout", "wanted"),
    [
        ("", PreAnswer()),
        ("  {}\n", PreAnswer()),
        ('{"decision": "deny", "reason": " no "}', PreAnswer("deny", "no")),
        ('{"arguments": {"argv": ["ls"]}, "extra": 1}', PreAnswer(None, "", {"argv": ["ls"]})),
    ],
)
def test_pre_tool_answers(stdout: str, wanted: PreAnswer) -> None:
    assert read_pre(stdout) == wanted


@pytest.mark.parametrize(
    ("stdout", "said"),
    [
        ("allow", "not JSON"),
        ('["allow"]', "not a JSON object"),
        ('{"decision": "yes"}', "decision must be allow, deny or ask"),
        ('{"arguments": ["ls"]}', "'arguments' must be a JSON object"),
        ('{"decision": "deny", "reason": 3}', "'reason' must be a string"),
    ],
)
def test_garbage_pre_tool_answers_are_refused_with_what_was_wrong(stdout: str, said: str) -> None:
    with pytest.raises(BadAnswer, match=said):
        read_pre(stdout)


def test_stop_and_post_tool_answers() -> None:
    assert read_stop('{"decision": "block", "reason": "tests first"}').block
    assert not read_stop('{"decision": "allow"}').block
    with pytest.raises(BadAnswer, match="a block needs a reason"):
        read_stop('{"decision": "block"}')
    assert read_post('{"add": "x" }').add == "x"
    with pytest.raises(BadAnswer):
        read_post('{"add": ["x"]}')


def test_a_huge_payload_is_cut_to_fit_one_variable_and_says_so() -> None:
    payload = {"event": "pre_tool", "step": 1, "arguments": {"content": "x" * 500_000}}
    text = payload_json(payload)
    assert len(text) <= MAX_PAYLOAD_CHARS
    cut = json.loads(text)
    assert cut["truncated"] is True and cut["step"] == 1
    assert cut["arguments"]["content"].endswith("[... 498,000 more]")
    assert "truncated" not in json.loads(payload_json({"event": "stop"}))


@pytest.mark.parametrize(
    ("pattern", "name", "wanted"),
    [
        (None, "exec", True),
        ("*", "anything", True),
        ("exec", "exec", True),
        ("exec", "exec_more", False),
        ("write_file|edit_file", "edit_file", True),
        ("read_*", "read_file", True),
        ("mcp__github__*", "mcp__gitlab__x", False),
    ],
)
def test_match_is_a_glob_with_alternatives(pattern: str | None, name: str, wanted: bool) -> None:
    assert matches(pattern, name) is wanted


def test_hooks_by_event_and_name_in_file_order() -> None:
    hooks = HookSet.from_config(
        {
            "pre_tool": [
                {"match": "exec", "command": "a"},
                {"command": ["b", "--x"], "timeout_s": 2},
            ],
            "stop": [{"match": "ignored", "command": "c"}],
        }
    )
    assert [h.label for h in hooks.at("pre_tool", "exec")] == [
        "pre_tool#0 (a)",
        "pre_tool#1 (b --x)",
    ]
    assert [h.index for h in hooks.at("pre_tool", "grep")] == [1]
    assert hooks.at("pre_tool", "grep")[0].timeout_s == 2
    assert [h.command for h in hooks.at("stop")] == [("sh", "-c", "c")]
    assert not HookSet() and hooks

"""Record a scripted run, replay it by request content with no provider behind it."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ioh_tui import __version__
from ioh_tui.core.errors import ConfigError, ProviderError
from ioh_tui.core.transcript import (
    Attempt,
    Completion,
    Message,
    Request,
    StreamPiece,
    TextPiece,
    ToolCall,
    ToolSpec,
    Usage,
)
from ioh_tui.providers.record import Recorder, Replay, request_key, request_to_json
from ioh_tui.providers.recording import read_recording
from ioh_tui.providers.testing.scripted import ScriptedProvider
from tests.fakes.provider_server import scenario

READ = {"name": "read_file", "arguments": {"path": "calc.py"}}
SCRIPT = scenario(
    {"thinking": "Where is it?", "text": "Looking at calc.py first.", "tool_calls": [READ]},
    {"text": "Fixed it.", "usage": {"input_tokens": 321, "output_tokens": 9}},
)
TOOLS = (ToolSpec("read_file", "Read a file.", {"type": "object"}),)
FIRST = Request((Message("system", "Be careful."), Message("user", "fix it")), tools=TOOLS)


def second(first: Completion) -> Request:
    return Request(
        (
            *FIRST.messages,
            Message("assistant", first.text, first.tool_calls),
            Message("tool", "def add(a, b): return a - b", tool_call_id=first.tool_calls[0].id),
        ),
        tools=TOOLS,
    )


async def record(path: Path) -> tuple[Completion, Completion]:
    recorder = Recorder(ScriptedProvider(SCRIPT))
    one = await recorder.complete(FIRST)
    two = await recorder.complete(second(one))
    recorder.save(path)
    return one, two


async def test_a_replay_answers_a_recorded_run_exactly_and_streams_it(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    one, two = await record(path)
    replay = Replay.load(path)
    pieces: list[StreamPiece] = []
    attempts: list[Attempt] = []
    again_one = await replay.complete(FIRST, on_piece=pieces.append, on_attempt=attempts.append)
    again_two = await replay.complete(second(again_one))
    assert again_one == one
    assert again_two == two
    assert again_two.usage == Usage(input_tokens=321, output_tokens=9)
    assert [a.provider for a in attempts] == ["replay"]
    assert attempts[0].failure is None
    streamed = "".join(p.text for p in pieces if isinstance(p, TextPiece))
    assert streamed == one.text
    assert len(pieces) >= 5, "thinking, text and the call arrive in pieces"
    assert replay.name == "replay"
    assert replay.model == "fake-model"


async def test_the_file_is_json_lines_the_version_first(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    await record(path)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert lines[0] == {"ioh_tui": __version__}
    assert len(lines) == 3
    assert set(lines[1]) == {"request", "completion"}
    assert lines[1]["completion"]["tool_calls"][0]["arguments"] == READ["arguments"]


async def test_each_answer_is_in_the_file_as_soon_as_it_arrives(tmp_path: Path) -> None:
    path = tmp_path / "live.jsonl"
    recorder = Recorder(ScriptedProvider(SCRIPT), path)
    assert path.read_text().splitlines() == [json.dumps({"ioh_tui": __version__}).replace(" ", "")]
    one = await recorder.complete(FIRST)
    assert len(path.read_text().splitlines()) == 2, "written before the next request"
    again = await Replay.load(path).complete(FIRST)
    assert again == one


def test_a_recording_that_cannot_be_written_fails_at_once(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot write recording"):
        Recorder(ScriptedProvider(SCRIPT), tmp_path / "no-such-dir" / "run.jsonl")


async def test_a_run_past_the_last_answer_says_the_recording_ran_out(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    one, two = await record(path)
    later = replace(
        second(one),
        messages=(*second(one).messages, Message("assistant", two.text), Message("user", "more")),
    )
    with pytest.raises(ProviderError) as raised:
        await Replay.load(path).complete(later)
    assert raised.value.kind == "malformed" and not raised.value.retryable
    assert "the recording ran out: its 2 answers are used up" in str(raised.value)


async def test_a_sub_agent_records_to_the_same_file(tmp_path: Path) -> None:
    path = tmp_path / "tree.jsonl"
    child_script = scenario({"text": "child answer"})
    root = ScriptedProvider(replace(SCRIPT, agents={"child": child_script}))
    recorder = Recorder(root, path)
    await recorder.for_agent("the child goal").complete(FIRST)
    await recorder.complete(FIRST)
    answers = [json.loads(line)["completion"]["text"] for line in path.read_text().splitlines()[1:]]
    assert answers == ["child answer", "Looking at calc.py first."]


async def test_the_same_request_asked_again_gets_the_same_answer(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    one, _ = await record(path)
    replay = Replay.load(path)
    assert [await replay.complete(FIRST) for _ in range(3)] == [one, one, one]


async def test_failures_are_not_recorded() -> None:
    failing = scenario({"text": "late", "errors": [{"status": 401}]})
    recorder = Recorder(ScriptedProvider(failing))
    with pytest.raises(ProviderError):
        await recorder.complete(FIRST)
    assert recorder.exchanges == []
    assert (await recorder.complete(FIRST)).text == "late"
    assert len(recorder.exchanges) == 1


@pytest.mark.parametrize(
    ("change", "named"),
    [
        (lambda r: replace(r, max_tokens=100), "max_tokens"),
        (lambda r: replace(r, model="other"), "model"),
        (lambda r: replace(r, tools=()), "tools"),
        (
            lambda r: replace(r, messages=(r.messages[0], Message("user", "fix it NOW"))),
            "messages[1].content",
        ),
        (lambda r: replace(r, messages=r.messages[:1]), "has 2 messages and this request 1"),
    ],
)
async def test_a_divergent_request_fails_loudly_naming_where(
    tmp_path: Path, change: Any, named: str
) -> None:
    path = tmp_path / "run.json"
    await record(path)
    attempts: list[Attempt] = []
    with pytest.raises(ProviderError) as raised:
        await Replay.load(path).complete(change(FIRST), on_attempt=attempts.append)
    assert raised.value.kind == "malformed"
    assert not raised.value.retryable
    assert named in str(raised.value)
    assert "exchange 0" in str(raised.value)
    assert len(attempts) == 1, "a divergence is not retried"


async def test_the_divergence_names_the_nearest_recording(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    one, _ = await record(path)
    drifted = second(one)
    drifted = replace(
        drifted, messages=(*drifted.messages[:3], Message("tool", "other file contents"))
    )
    with pytest.raises(ProviderError) as raised:
        await Replay.load(path).complete(drifted)
    message = str(raised.value)
    assert "exchange 1" in message
    assert "messages[3].content" in message
    assert "other file contents" in message


class Alternating:
    """A provider that answers the same request differently each time."""

    name = "alternating"
    model = "m"

    def __init__(self) -> None:
        self.count = 0

    async def complete(self, request: Request, **_: Any) -> Completion:
        self.count += 1
        return Completion(text=f"answer {self.count}", stop_reason="stop")

    async def aclose(self) -> None:
        return None


async def test_a_request_recorded_twice_moves_on_only_after_a_different_one(
    tmp_path: Path,
) -> None:
    other = Request((Message("user", "something else"),))
    recorder = Recorder(Alternating())
    for request in (FIRST, other, FIRST):
        await recorder.complete(request)
    recorder.save(tmp_path / "run.json")
    replay = Replay.load(tmp_path / "run.json")
    texts = [(await replay.complete(r)).text for r in (FIRST, FIRST, other, FIRST, other, FIRST)]
    assert texts == ["answer 1", "answer 1", "answer 2", "answer 3", "answer 2", "answer 3"]


@pytest.mark.parametrize("version", ["0.2.0", "1.1.0", "0.0.9"])
async def test_another_minor_series_is_refused(tmp_path: Path, version: str) -> None:
    path = tmp_path / "run.json"
    await record(path)
    _, *rest = path.read_text().splitlines()
    path.write_text("\n".join([json.dumps({"ioh_tui": version}), *rest]))
    with pytest.raises(ConfigError, match=version):
        Replay.load(path)


async def test_a_patch_release_of_the_same_series_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    await record(path)
    _, *rest = path.read_text().splitlines()
    major, minor, _ = __version__.split(".")
    path.write_text("\n".join([json.dumps({"ioh_tui": f"{major}.{minor}.99"}), *rest]))
    assert (await Replay.load(path).complete(FIRST)).text == "Looking at calc.py first."


@pytest.mark.parametrize(
    ("content", "said"),
    [
        ("not json", "line 1 is not valid JSON"),
        ("[]", "line 1 is not a JSON object"),
        ('{"exchanges": []}', "not an ioh-tui recording"),
        ("", "not an ioh-tui recording"),
        ('{"ioh_tui": "0.1.0"}', "holds no answers"),
        ('{"ioh_tui": "0.1.0"}\n{}', "malformed"),
        ('{"ioh_tui": "0.1.0"}\n{"request": {}, "completion": {}}', "no request messages"),
        ('{"ioh_tui": "0.1.0"}\n{"request"', "line 2 is not valid JSON"),
    ],
)
def test_a_broken_recording_is_a_config_error(tmp_path: Path, content: str, said: str) -> None:
    path = tmp_path / "run.jsonl"
    path.write_text(content.replace("0.1.0", __version__))
    with pytest.raises(ConfigError, match=said):
        Replay.load(path)


def test_a_missing_recording_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read"):
        Replay.load(tmp_path / "nope.json")


texts = st.text(max_size=20)
messages = st.lists(
    st.builds(
        Message,
        role=st.sampled_from(["system", "user", "assistant", "tool"]),
        content=texts,
        tool_calls=st.lists(
            st.builds(
                ToolCall,
                id=st.text(max_size=5),
                name=st.text(min_size=1, max_size=8),
                arguments=st.dictionaries(
                    texts, st.integers() | texts | st.floats(allow_nan=False)
                ),
            ),
            max_size=2,
        ).map(tuple),
    ),
    min_size=1,
    max_size=4,
).map(tuple)


@settings(
    max_examples=40,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(messages, st.integers(1, 100_000))
def test_any_request_survives_the_file_with_the_same_key(
    tmp_path: Path, history: tuple[Message, ...], max_tokens: int
) -> None:
    request = Request(history, max_tokens=max_tokens)
    recorder = Recorder(ScriptedProvider(SCRIPT))
    recorder.exchanges.append((request, Completion(text="ok")))
    recorder.save(tmp_path / "prop.jsonl")
    saved = read_recording(tmp_path / "prop.jsonl")[0]["request"]
    assert request_key(saved) == request_key(request_to_json(request))

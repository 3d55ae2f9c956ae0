"""Scenario files (interface.md §4): checked once, then served in-process or over a wire.

About 450 lines: the scenario type and its checked parser are one format, and the turn counter
shares the scenario's way of counting turns; the parser is the part to move out if it grows.
"""

from __future__ import annotations

import json
import math
import re
import time
from collections import defaultdict
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import compress
from operator import attrgetter
from pathlib import Path
from typing import Any

from ioh_tui.core.errors import ConfigError
from ioh_tui.core.transcript import Completion, Message, Request, StreamPiece, ToolCall
from ioh_tui.providers.pieces import completion_pieces

_ROLE = attrgetter("role")
_FOLDED = re.compile(
    r"^\[earlier work, summarised: (\d+) turn|^\[(\d+) earlier turn\(s\) left out", re.M
)
"""The harness's lead for folded turns (`context.compaction.lead`), which says how many."""
_SUMMARISER = "You compact an agent's working notes"
"""How the harness's summarising request opens (`context.compaction`)."""


def _summarising(request: Request) -> bool:
    first = request.messages[0] if request.messages else None
    return first is not None and first.role == "system" and first.content.startswith(_SUMMARISER)


def _summary(request: Request) -> str:
    """A deterministic summary of a summarising request's notes: how many calls, which tools."""
    notes = request.messages[-1].content
    called = [line for line in notes.splitlines() if line.startswith("agent called: ")]
    names = sorted({line.removeprefix("agent called: ").split(" ", 1)[0] for line in called})
    last = called[-1].removeprefix("agent called: ")[:120] if called else "nothing"
    return f"Made {len(called)} tool call(s) ({', '.join(names) or 'none'}); the last: {last}."


@dataclass(frozen=True, slots=True)
class ScriptedError:
    """One failure served before a turn's answer: an HTTP error, a cut stream, or an error event."""

    status: int | None = None
    retry_after_s: float | None = None
    disconnect_after_chunks: int | None = None
    stream_error: str | None = None
    fail_for_s: float | None = None
    """Serve this failure to every request until this many seconds after the first it answered
    (an outage), then go on to the next; None: serve it once."""


class ErrorCursor:
    """Which scripted failure a request gets, counted per key (an agent's turn), in order.

    Both doubles use it, so `fail_for_s` means the same in-process and over the wire.

    Args:
        clock: seconds, monotonic (injectable for tests).
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._used: defaultdict[Hashable, int] = defaultdict(int)
        self._since: dict[Hashable, float] = {}

    def next(self, key: Hashable, errors: Sequence[ScriptedError]) -> ScriptedError | None:
        """The failure the next request for `key` gets, or None when they are used up."""
        while (used := self._used[key]) < len(errors):
            error = errors[used]
            if error.fail_for_s is not None:
                now = self._clock()
                if now - self._since.setdefault(key, now) < error.fail_for_s:
                    return error
                del self._since[key]
                self._used[key] += 1
                continue
            self._used[key] += 1
            return error
        return None


@dataclass(frozen=True, slots=True)
class ScriptedCall:
    """A tool call a turn makes."""

    name: str
    arguments: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Turn:
    """One scripted assistant turn."""

    text: str = ""
    thinking: str = ""
    tool_calls: tuple[ScriptedCall, ...] = ()
    input_tokens: int | None = None
    output_tokens: int | None = None
    chunk_delay_ms: float = 0.0
    delay_ms: float = 0.0
    errors: tuple[ScriptedError, ...] = ()


@dataclass(frozen=True, slots=True)
class Scenario:
    """A model's whole script: its turns, and sub-agents' scripts keyed by a goal substring."""

    model: str = "scripted-model"
    turns: tuple[Turn, ...] = ()
    agents: Mapping[str, Scenario] = field(default_factory=dict)
    context_window: int | None = None
    """The model's window: a request estimated past it is refused, as a hosted model refuses."""
    summary_delay_ms: float = 0.0
    """How long a summarising request waits before its answer (to kill a run inside one)."""

    def overflows(self, request: Request) -> bool:
        """Whether `request` passes the model's window (the harness's own estimate)."""
        window = self.context_window
        return window is not None and estimate_tokens(request_text(request.messages)) > window

    def turn_for(self, request: Request, index: int | None = None) -> Turn:
        """The turn answering `request`: turn i answers a transcript holding i assistant turns.

        When the turns run out, a plain text turn with no tool call. A request asking to
        summarise the transcript (a compaction) is answered with a summary, never a turn.
        `index` is the request's `turn_index` when the caller has it already.
        """
        if _summarising(request):
            return Turn(text=_summary(request), delay_ms=self.summary_delay_ms)
        if index is None:
            index = self.turn_index(request)
        if index < len(self.turns):
            return self.turns[index]
        return Turn(text="I have nothing more to do.")

    def turn_index(self, request: Request) -> int:
        """Which turn `turn_for` serves (errors are counted per turn index).

        The assistant turns in the transcript, and those the harness folded to fit the window: it
        says how many in the message that stands for them (`[earlier work, summarised: N turn(s)]`,
        `[N earlier turn(s) left out ...`).
        """
        if _summarising(request):
            return -1
        said, folded = _counted(request.messages)
        return said + (folded or 0)

    def for_agent(self, goal: str) -> Scenario:
        """The script of a sub-agent: the `agents` entry whose key is a substring of its goal."""
        for key, scenario in self.agents.items():
            if key in goal:
                return scenario
        return Scenario(model=self.model)


class TurnCounter:
    """`Scenario.turn_index` for one conversation, reading only what each request added.

    A run's request is its last one and the turn since: counting the whole transcript on every
    call made the stand-in model's cost grow with the run (0.3 ms a call at 1,000 steps, the
    harness's own step being about 2 ms). Any other request (folded, another agent's) is
    counted whole, so the index is always `turn_index`'s.
    """

    def __init__(self) -> None:
        self._messages: tuple[Message, ...] = ()
        self._said = 0
        self._folded: int | None = None

    def index(self, request: Request) -> int:
        """`Scenario.turn_index(request)` (which depends on no scenario's turns)."""
        if _summarising(request):
            return -1
        messages, known = request.messages, len(self._messages)
        if known and len(messages) >= known and messages[:known] == self._messages:
            said, folded = _counted(messages[known:])
            self._said += said
            self._folded = self._folded if self._folded is not None else folded
        else:
            self._said, self._folded = _counted(messages)
        self._messages = messages
        return self._said + (self._folded or 0)


def _counted(messages: Sequence[Message]) -> tuple[int, int | None]:
    """The assistant turns in `messages`, and the turns the first folded lead says (if any)."""
    # Counted and filtered in C (`map`, `list.count`, `compress`).
    roles = list(map(_ROLE, messages))
    said = roles.count("assistant")
    for m in compress(messages, map("user".__eq__, roles)):
        if _FOLDED.search(m.content):
            return said, sum(int(a or b) for a, b in _FOLDED.findall(m.content))
    return said, None


def load_scenario(path: str | Path) -> Scenario:
    """Read and check a scenario file; `ConfigError` naming what is wrong."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read scenario {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"scenario {path} is not UTF-8 text ({exc.reason})") from None
    try:
        data = json.loads(text, parse_constant=_refuse, parse_float=_finite)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"scenario {path} is not valid JSON: {exc.msg} at line {exc.lineno}"
        ) from None
    except _NotFinite as exc:
        raise ConfigError(f"scenario {path}: {exc} is not a finite number") from None
    except RecursionError:
        raise ConfigError(f"scenario {path} is nested too deeply") from None
    try:
        return parse_scenario(data, where=str(path))
    except RecursionError:
        raise ConfigError(f"scenario {path}: agents are nested too deeply") from None


class _NotFinite(ValueError):
    """A NaN or an infinity: Python's json reads them, a scenario may not hold one.

    (`delay_ms: Infinity` would hang the run for ever.)
    """


def _refuse(name: str) -> Any:
    raise _NotFinite(name)


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # 1e999 reads as an infinity
        raise _NotFinite(text)
    return value


def parse_scenario(data: Any, *, where: str = "scenario") -> Scenario:
    """Check a decoded scenario and build it."""
    obj = _object(data, where, {"model", "turns", "agents", "context_window", "summary_delay_ms"})
    model = obj.get("model", "scripted-model")
    window = obj.get("context_window")
    if window is not None and (
        isinstance(window, bool) or not isinstance(window, int) or window < 1
    ):
        raise ConfigError(f"{where}: context_window must be a positive integer")
    if not isinstance(model, str) or not model:
        raise ConfigError(f"{where}: model must be a non-empty string")
    turns_raw = obj.get("turns", [])
    if not isinstance(turns_raw, list):
        raise ConfigError(f"{where}: turns must be a list")
    turns = tuple(_turn(t, f"{where}: turns[{i}]") for i, t in enumerate(turns_raw))
    agents_raw = obj.get("agents", {})
    if not isinstance(agents_raw, dict):
        raise ConfigError(f"{where}: agents must be an object")
    agents = {
        str(key): parse_scenario(
            {
                "model": model,
                **_object(value, f"{where}: agents[{key!r}]", {"model", "turns", "agents"}),
            },
            where=f"{where}: agents[{key!r}]",
        )
        for key, value in agents_raw.items()
    }
    return Scenario(
        model=model,
        turns=turns,
        agents=agents,
        context_window=window,
        summary_delay_ms=_number(obj, "summary_delay_ms", where),
    )


_TURN_KEYS = {"text", "thinking", "tool_calls", "usage", "chunk_delay_ms", "delay_ms", "errors"}


def _turn(data: Any, where: str) -> Turn:
    obj = _object(data, where, _TURN_KEYS)
    text = _string(obj, "text", where)
    thinking = _string(obj, "thinking", where)
    calls_raw = obj.get("tool_calls", [])
    if not isinstance(calls_raw, list):
        raise ConfigError(f"{where}: tool_calls must be a list")
    calls = []
    for i, raw in enumerate(calls_raw):
        call = _object(raw, f"{where}.tool_calls[{i}]", {"name", "arguments"})
        name = call.get("name")
        if not isinstance(name, str) or not name:
            raise ConfigError(f"{where}.tool_calls[{i}]: name must be a non-empty string")
        arguments = call.get("arguments", {})
        if not isinstance(arguments, dict):
            raise ConfigError(f"{where}.tool_calls[{i}]: arguments must be an object")
        calls.append(ScriptedCall(name, arguments))
    usage = _object(obj.get("usage", {}), f"{where}.usage", {"input_tokens", "output_tokens"})
    errors_raw = obj.get("errors", [])
    if not isinstance(errors_raw, list):
        raise ConfigError(f"{where}: errors must be a list")
    return Turn(
        text=text,
        thinking=thinking,
        tool_calls=tuple(calls),
        input_tokens=_count(usage, "input_tokens", f"{where}.usage"),
        output_tokens=_count(usage, "output_tokens", f"{where}.usage"),
        chunk_delay_ms=_number(obj, "chunk_delay_ms", where),
        delay_ms=_number(obj, "delay_ms", where),
        errors=tuple(_error(e, f"{where}.errors[{i}]") for i, e in enumerate(errors_raw)),
    )


def _error(data: Any, where: str) -> ScriptedError:
    obj = _object(
        data,
        where,
        {"status", "retry_after_s", "disconnect_after_chunks", "stream_error", "fail_for_s"},
    )
    kinds = [k for k in ("status", "disconnect_after_chunks", "stream_error") if k in obj]
    if len(kinds) != 1:
        raise ConfigError(
            f"{where}: give exactly one of status, disconnect_after_chunks, stream_error"
        )
    status = obj.get("status")
    if status is not None and (not isinstance(status, int) or not 400 <= status <= 599):
        raise ConfigError(f"{where}: status must be an HTTP error status (400-599)")
    retry_after = obj.get("retry_after_s")
    if retry_after is not None and (
        not isinstance(retry_after, int | float) or not _fits(retry_after) or retry_after < 0
    ):
        raise ConfigError(f"{where}: retry_after_s must be a number >= 0")
    cut = obj.get("disconnect_after_chunks")
    if cut is not None and (not isinstance(cut, int) or cut < 0):
        raise ConfigError(f"{where}: disconnect_after_chunks must be an integer >= 0")
    message = obj.get("stream_error")
    if message is not None and not isinstance(message, str):
        raise ConfigError(f"{where}: stream_error must be a string")
    lasting = obj.get("fail_for_s")
    if lasting is not None and (
        isinstance(lasting, bool) or not isinstance(lasting, int | float) or not lasting > 0
    ):
        raise ConfigError(f"{where}: fail_for_s must be a number of seconds > 0")
    return ScriptedError(status, retry_after, cut, message, lasting)


def _object(data: Any, where: str, allowed: set[str]) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise ConfigError(f"{where} must be a JSON object")
    unknown = sorted(set(data) - allowed)
    if unknown:
        raise ConfigError(
            f"{where}: unknown key {unknown[0]!r} (allowed: {', '.join(sorted(allowed))})"
        )
    return data


def _string(obj: Mapping[str, Any], key: str, where: str) -> str:
    value = obj.get(key, "")
    if not isinstance(value, str):
        raise ConfigError(f"{where}: {key} must be a string")
    return value


def _number(obj: Mapping[str, Any], key: str, where: str) -> float:
    value = obj.get(key, 0)
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not _fits(value)
        or value < 0
    ):
        raise ConfigError(f"{where}: {key} must be a number >= 0")
    return float(value)


def _fits(value: float) -> bool:
    """Whether a number is finite as a float (an int past 1e308 is not)."""
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def _count(obj: Mapping[str, Any], key: str, where: str) -> int | None:
    value = obj.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ConfigError(f"{where}: {key} must be an integer >= 0")
    return value


def estimate_tokens(text: str) -> int:
    """The harness's token estimate: ceil(chars / 4)."""
    return math.ceil(len(text) / 4)


def request_text(messages: Sequence[Message]) -> str:
    """All text of a request, for the default usage estimate."""
    parts = []
    for m in messages:
        parts.append(m.content)
        parts.extend(json.dumps(dict(c.arguments), sort_keys=True) for c in m.tool_calls)
    return "".join(parts)


def turn_usage(turn: Turn, request: Request) -> tuple[int, int]:
    """Input and output tokens of a turn: as scripted, else estimated from the text."""
    served = (
        turn.text + turn.thinking + "".join(json.dumps(dict(c.arguments)) for c in turn.tool_calls)
    )
    input_tokens = (
        turn.input_tokens
        if turn.input_tokens is not None
        else estimate_tokens(request_text(request.messages))
    )
    output_tokens = (
        turn.output_tokens if turn.output_tokens is not None else max(1, estimate_tokens(served))
    )
    return input_tokens, output_tokens


def call_id(turn_index: int, index: int) -> str:
    """The id of a turn's `index`-th tool call (the same in-process and over the wire)."""
    return f"call_{turn_index}_{index}"


def turn_calls(turn: Turn, turn_index: int) -> tuple[ToolCall, ...]:
    """A turn's tool calls with their ids."""
    return tuple(
        ToolCall(call_id(turn_index, i), c.name, dict(c.arguments))
        for i, c in enumerate(turn.tool_calls)
    )


def turn_pieces(turn: Turn, turn_index: int) -> list[StreamPiece]:
    """The pieces a turn streams in, in order: what `disconnect_after_chunks` counts."""
    answer = Completion(
        text=turn.text, thinking=turn.thinking, tool_calls=turn_calls(turn, turn_index)
    )
    return completion_pieces(answer)

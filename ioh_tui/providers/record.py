"""Record a provider's answers, and replay them later by request content with no network (§9.8).

`--record FILE` wraps the run's provider in a `Recorder`, which appends each answer to FILE as it
arrives; `--replay FILE` answers from a `Replay` of it instead of any model (no key, no network).
The file is JSON lines (`recording.py`). Replay keys an answer by the sha256 of the canonical JSON
of the *whole* request (messages, tools, max_tokens, model; sorted keys). Keying by content, not
by call count, is what makes a resumed run that re-asks a step get the answer the crashed run got.
Unlike the original (which clears `messages` from the key), the transcript is part of the key
here, so a run that drifts from the recording fails loudly at the first divergent request instead
of being answered for a different conversation; a run that goes on past the last recorded answer
fails saying the recording ran out.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from ioh_tui.core.codec import completion_from_json, completion_to_json, message_to_json
from ioh_tui.core.errors import ConfigError, ProviderError
from ioh_tui.core.redact import Redactor
from ioh_tui.core.transcript import (
    AttemptSink,
    Completion,
    Request,
    StreamSink,
)
from ioh_tui.providers.base import Provider
from ioh_tui.providers.pieces import completion_pieces
from ioh_tui.providers.recording import (
    append_exchange,
    read_recording,
    start_recording,
    write_recording,
)
from ioh_tui.providers.retry import call_with_retries


def request_to_json(request: Request) -> dict[str, Any]:
    """The request as plain JSON data (every field, defaults included, so keys are stable)."""
    return {
        "messages": [message_to_json(m) for m in request.messages],
        "tools": [
            {"name": t.name, "description": t.description, "parameters": dict(t.parameters)}
            for t in request.tools
        ],
        "max_tokens": request.max_tokens,
        "model": request.model,
    }


def request_key(request: Mapping[str, Any]) -> str:
    """sha256 of the canonical JSON of a request (as `request_to_json` gives it)."""
    canonical = json.dumps(request, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


class Recorder:
    """Passes every request to `inner` and keeps each successful (request, completion).

    Failures are not kept: a replay answers only what the run went on with. Given a `path`, the
    file is started at once (so a path that cannot be written fails before the run starts) and
    each answer is appended to it as it arrives.

    Raises:
        ConfigError: `path` cannot be written.
    """

    def __init__(self, inner: Provider, path: str | Path | None = None) -> None:
        self.inner = inner
        self.path = None if path is None else Path(path)
        """Where each answer is appended, if anywhere."""
        self.exchanges: list[tuple[Request, Completion]] = []
        """Successful exchanges in the order they happened."""
        if self.path is not None:
            start_recording(self.path)

    def for_agent(self, goal: str) -> Recorder:
        """The recorder of a sub-agent: its provider's own (a scripted one's), the same file."""
        for_agent = getattr(self.inner, "for_agent", None)
        child = Recorder(for_agent(goal) if callable(for_agent) else self.inner)
        child.path = self.path
        return child

    @property
    def name(self) -> str:
        """The inner provider's name (the trace shows who really answered)."""
        return self.inner.name

    @property
    def model(self) -> str | None:
        """The inner provider's model."""
        return self.inner.model

    async def complete(
        self,
        request: Request,
        *,
        on_piece: StreamSink | None = None,
        on_attempt: AttemptSink | None = None,
        deadline: float | None = None,
        max_retries: int | None = None,
    ) -> Completion:
        """Ask the inner provider and keep the answer."""
        completion = await self.inner.complete(
            request,
            on_piece=on_piece,
            on_attempt=on_attempt,
            deadline=deadline,
            max_retries=max_retries,
        )
        # The recording is a file on disk like the store: the answer goes in with keys masked.
        kept = Redactor.configured().value(completion)
        self.exchanges.append((request, kept))
        if self.path is not None:
            append_exchange(self.path, _exchange(request, kept))
        return completion

    def save(self, path: str | Path) -> None:
        """Write every exchange kept so far as a whole recording (atomically)."""
        write_recording(Path(path), [_exchange(r, c) for r, c in self.exchanges])

    async def aclose(self) -> None:
        """Close the inner provider."""
        await self.inner.aclose()


class Replay:
    """Answers from a recording by request content; never touches the network.

    The same request asked again straight away gets the same answer (a re-asked step); when the
    same request was recorded several times, asking it again after a different one moves on to
    its next recorded answer, staying on the last.
    """

    def __init__(self, exchanges: Sequence[tuple[Mapping[str, Any], Completion]]) -> None:
        self._recorded = [dict(request) for request, _ in exchanges]
        self._answers: dict[str, list[Completion]] = {}
        for request, completion in exchanges:
            self._answers.setdefault(request_key(request), []).append(completion)
        self._position: dict[str, int] = {}
        self._last_key: str | None = None
        self._model = next((c.model for _, c in exchanges if c.model), None)

    @classmethod
    def load(cls, path: str | Path) -> Replay:
        """Read a recording.

        Raises:
            ConfigError: missing, unreadable or malformed, written by another `major.minor`
                series, or holding no answer.
        """
        try:
            exchanges = [
                (e["request"], completion_from_json(e["completion"]))
                for e in read_recording(Path(path))
            ]
            for number, (request, _) in enumerate(exchanges):
                if not isinstance(request, dict) or not isinstance(request.get("messages"), list):
                    raise ConfigError(
                        f"recording {path}: exchange {number} has no request messages"
                    )
            return cls(exchanges)  # hashes every request: deep nesting fails here too
        except (KeyError, TypeError, AttributeError) as exc:
            raise ConfigError(f"recording {path} is malformed: {exc!r}") from None
        except RecursionError:
            # Python's JSON reader and writer recurse once per level of nesting.
            raise ConfigError(f"recording {path} is nested too deeply to read") from None

    @property
    def name(self) -> str:
        """`replay`."""
        return "replay"

    @property
    def model(self) -> str | None:
        """The model the recording was answered by."""
        return self._model

    async def complete(
        self,
        request: Request,
        *,
        on_piece: StreamSink | None = None,
        on_attempt: AttemptSink | None = None,
        deadline: float | None = None,
        max_retries: int | None = None,
    ) -> Completion:
        """Stream and return the recorded answer to this exact request.

        Raises:
            ProviderError: `malformed`, not retryable, naming where the request diverges.
        """
        del max_retries  # a recording's answer never changes: nothing to retry
        return await call_with_retries(
            lambda: self._answer(request, on_piece),
            provider=self.name,
            model=self.model,
            max_retries=0,
            on_attempt=on_attempt,
            deadline=deadline,
        )

    async def aclose(self) -> None:
        """Nothing to release."""

    async def _answer(self, request: Request, on_piece: StreamSink | None) -> Completion:
        asked = request_to_json(request)
        key = request_key(asked)
        answers = self._answers.get(key)
        if answers is None:
            raise ProviderError("malformed", self._divergence(asked), retryable=False)
        position = self._position.get(key, -1)
        if position < 0 or self._last_key != key:
            position = min(position + 1, len(answers) - 1)
            self._position[key] = position
        self._last_key = key
        completion = answers[position]
        started = time.monotonic()
        if on_piece is not None:
            for piece in completion_pieces(completion):
                on_piece(piece)
        return (
            completion if completion.latency_ms is not None else _with_latency(completion, started)
        )

    def _divergence(self, asked: Mapping[str, Any]) -> str:
        if not self._recorded:
            return "replay: the recording holds no exchanges"
        scored = [
            (_common_prefix(r["messages"], asked["messages"]), i)
            for i, r in enumerate(self._recorded)
        ]
        best, number = max(scored, key=lambda s: (s[0], -s[1]))
        nearest = self._recorded[number]
        if _carries_on(nearest, asked, best) and len(asked["messages"]) > max(
            len(r["messages"]) for r in self._recorded
        ):
            return (
                f"replay: the recording ran out: its {len(self._recorded)} answers are used up, "
                f"and this request carries on past the last of them (exchange {number})"
            )
        return (
            "replay: no recorded answer for this request; the nearest recording "
            f"(exchange {number}) {_difference(nearest, asked, best)}"
        )


def _exchange(request: Request, completion: Completion) -> dict[str, Any]:
    return {"request": request_to_json(request), "completion": completion_to_json(completion)}


def _carries_on(recorded: Mapping[str, Any], asked: Mapping[str, Any], same: int) -> bool:
    """Whether `asked` is `recorded` with more messages after it (the same tools and model)."""
    fields = ("tools", "max_tokens", "model")
    return same == len(recorded["messages"]) and all(
        recorded.get(f) == asked.get(f) for f in fields
    )


def _common_prefix(recorded: Sequence[Any], asked: Sequence[Any]) -> int:
    count = 0
    for old, new in zip(recorded, asked, strict=False):
        if old != new:
            break
        count += 1
    return count


def _difference(recorded: Mapping[str, Any], asked: Mapping[str, Any], same: int) -> str:
    old_messages, new_messages = recorded["messages"], asked["messages"]
    if same < min(len(old_messages), len(new_messages)):
        old, new = old_messages[same], new_messages[same]
        for field in ("role", "content", "tool_calls", "tool_call_id"):
            if old.get(field) != new.get(field):
                return (
                    f"first differs at messages[{same}].{field}: "
                    f"recorded {_short(old.get(field))}, asked {_short(new.get(field))}"
                )
    if len(old_messages) != len(new_messages):
        return (
            f"has {len(old_messages)} messages and this request {len(new_messages)}"
            f" (the first {same} agree)"
        )
    for field in ("tools", "max_tokens", "model"):
        if recorded.get(field) != asked.get(field):
            old, new = _short(recorded.get(field)), _short(asked.get(field))
            return f"differs in {field}: recorded {old}, asked {new}"
    return "differs in a field this version does not compare"


def _short(value: Any, limit: int = 60) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _with_latency(completion: Completion, started: float) -> Completion:
    return replace(completion, latency_ms=(time.monotonic() - started) * 1000)

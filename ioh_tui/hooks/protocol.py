"""What a hook reads on stdin and what it may answer on stdout (docs/extending.md, "Hooks").

A hook reads one JSON object and writes at most one. An empty answer (or `{}`) has no opinion;
an answer that is not a JSON object, or whose fields have the wrong type or value, is garbage: it
is reported and decides nothing (`BadAnswer`). Keys a reader does not know are ignored, so a hook
written for a later version still works.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

STOP_BLOCK_LIMIT = 3
"""How many times `stop` hooks may keep one run going; past it the run ends as it would have."""
MAX_PAYLOAD_CHARS = 100_000
"""The stdin object travels in one environment variable (Linux caps one at 128 KiB)."""
_CUT_STRING_CHARS = 2_000
"""A payload over the bound has each long string cut to this, and says so (`"truncated": true`)."""
MAX_ADD_CHARS = 4_000
"""What a `post_tool` hook may add to one observation."""
MAX_REASON_CHARS = 2_000
"""What a reason the model reads may hold."""


class BadAnswer(Exception):
    """A hook's answer the protocol does not allow; the message says what was wrong."""


@dataclass(frozen=True, slots=True)
class PreAnswer:
    """A `pre_tool` hook's answer."""

    decision: Literal["allow", "deny", "ask"] | None = None
    reason: str = ""
    arguments: dict[str, Any] | None = None
    """The call's arguments rewritten (None: as they were)."""


@dataclass(frozen=True, slots=True)
class PostAnswer:
    """A `post_tool` hook's answer: text added to the observation the model reads."""

    add: str = ""


@dataclass(frozen=True, slots=True)
class StopAnswer:
    """A `stop` hook's answer: `block` keeps the run going with `reason` for the model."""

    block: bool = False
    reason: str = ""


def payload_json(payload: Mapping[str, Any]) -> str:
    """The stdin object as JSON, within `MAX_PAYLOAD_CHARS` (long strings cut, and said so)."""
    text = json.dumps(payload, ensure_ascii=False, default=str)
    if len(text) <= MAX_PAYLOAD_CHARS:
        return text
    cut = {**_cut(dict(payload)), "truncated": True}
    text = json.dumps(cut, ensure_ascii=False, default=str)
    return text if len(text) <= MAX_PAYLOAD_CHARS else json.dumps({**_bare(payload)})


def _cut(value: Any) -> Any:
    if isinstance(value, str) and len(value) > _CUT_STRING_CHARS:
        return value[:_CUT_STRING_CHARS] + f"[... {len(value) - _CUT_STRING_CHARS:,} more]"
    if isinstance(value, dict):
        return {k: _cut(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_cut(v) for v in value[:200]]
    return value


def _bare(payload: Mapping[str, Any]) -> dict[str, Any]:
    """Only the scalar fields: what is left when even the cut strings do not fit."""
    kept = {k: v for k, v in payload.items() if isinstance(v, int | float | bool | type(None))}
    return {**kept, "event": payload.get("event"), "tool": payload.get("tool"), "truncated": True}


def _object(stdout: str) -> dict[str, Any]:
    text = stdout.strip()
    if not text:
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        raise BadAnswer(f"not JSON: {text[:120]!r}") from None
    if not isinstance(value, dict):
        raise BadAnswer(f"not a JSON object: {text[:120]!r}")
    return value


def _text(answer: dict[str, Any], key: str, limit: int) -> str:
    value = answer.get(key, "")
    if value is None:
        return ""
    if not isinstance(value, str):
        raise BadAnswer(f"{key!r} must be a string")
    return value.strip()[:limit]


def read_pre(stdout: str) -> PreAnswer:
    """A `pre_tool` answer: `{"decision": "allow"|"deny"|"ask", "reason": ..., "arguments": {}}`.

    Raises:
        BadAnswer: not an object, an unknown decision, or a field of the wrong type.
    """
    answer = _object(stdout)
    decision = answer.get("decision")
    if decision not in (None, "allow", "deny", "ask"):
        raise BadAnswer(f"decision must be allow, deny or ask, not {decision!r}")
    arguments = answer.get("arguments")
    if arguments is not None and not isinstance(arguments, dict):
        raise BadAnswer("'arguments' must be a JSON object (the call's new arguments)")
    return PreAnswer(decision, _text(answer, "reason", MAX_REASON_CHARS), arguments)


def read_post(stdout: str) -> PostAnswer:
    """A `post_tool` answer: `{"add": "text for the model"}`.

    Raises:
        BadAnswer: not an object, or `add` not a string.
    """
    return PostAnswer(_text(_object(stdout), "add", MAX_ADD_CHARS))


def read_stop(stdout: str) -> StopAnswer:
    """A `stop` answer: `{"decision": "block", "reason": "what is left to do"}`.

    Raises:
        BadAnswer: not an object, an unknown decision, or a block without a reason.
    """
    answer = _object(stdout)
    decision = answer.get("decision")
    if decision not in (None, "block", "allow"):
        raise BadAnswer(f"decision must be block or allow, not {decision!r}")
    reason = _text(answer, "reason", MAX_REASON_CHARS)
    if decision == "block" and not reason:
        raise BadAnswer("a block needs a reason: the model reads it to know what is left")
    return StopAnswer(decision == "block", reason)

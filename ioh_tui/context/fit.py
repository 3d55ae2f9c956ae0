"""Fit a transcript into the window, cheapest first.

The pinned part (the system prompt, the task block) is sent whole every turn. The history after it
is made to fit, each stage only when the one before was not enough:

1. Stale observations become stubs: a read of a file that was read or written again later, the
   output of a command or a search run again later with the same arguments. What the model lost
   is still one call away, and the newer observation says more.
2. Old large tool outputs (outside the most recent turns) are cut to their heads, with a marker
   saying how much was cut and how to see it again.
3. The oldest turns are folded, whole (an assistant message and its tool results stay together,
   as the wires require): `fit` says how many, and the caller (`Context`) has them summarised by
   the model (a compaction) or, when that cannot be had, leaves them out with a line saying so.

The most recent turn always stays whole. `fit` is a pure function of its inputs. A run keeps
what it sent last turn and fits that plus the new messages (`Context`), so each turn costs what the
window holds, not what the whole run said; stubs and cuts are idempotent.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from ioh_tui.context.tokens import CHARS_PER_TOKEN
from ioh_tui.core.transcript import Message, ToolCall

KEEP_RECENT = 4
"""Turns at the end of the history that stage 2 never cuts."""
CUT_CHARS = 2_000
"""What stage 2 keeps of an old large tool output."""

_REREAD = ("read_file", "grep", "find", "list_dir", "exec")
"""Tools whose output a later identical call makes stale."""
_WRITES = ("write_file", "edit_file")
_CUT_MARK = "more characters cut from this old output"


@dataclass(frozen=True, slots=True)
class Fitted:
    """The history as it would be sent this turn, and what was done to make it fit."""

    messages: tuple[Message, ...]
    """The history after the pinned part, as sent (the lead first, when there is one)."""
    kept: tuple[Message, ...]
    """`messages` without the lead: what the next turn fits again."""
    fits: bool
    """Whether `messages` fit the limit as they are."""
    tokens: int
    """The whole request's count (pinned part included)."""
    stubbed: int = 0
    """Stale observations replaced by stubs."""
    cut: int = 0
    """Old tool outputs cut to their heads."""
    fold: int = 0
    """When it does not fit: the oldest turns of `kept` to fold (summarise or leave out) so that
    it would, with a lead of the reserved size; 0 when folding cannot help (one turn is left)."""


Count = Callable[[Sequence[Message]], int]


def fit(
    pinned: Sequence[Message],
    history: Sequence[Message],
    *,
    limit: int,
    count: Count,
    lead: Message | None = None,
    lead_reserve: int = 0,
) -> Fitted:
    """The history to send after `pinned` (and `lead`) so that the request's count fits `limit`.

    `lead` stands for the turns folded by earlier fits (a summary, or a line saying how many were
    left out); `lead_reserve` is the count a new lead may take once more turns are folded.
    """
    messages = list(history)
    head = [lead] if lead is not None else []

    def done(stubbed: int = 0, cut: int = 0, fold: int = 0) -> Fitted:
        tokens = count([*pinned, *head, *messages])
        sent = (*head, *messages)
        return Fitted(sent, tuple(messages), tokens <= limit, tokens, stubbed, cut, fold)

    first = done()
    if first.fits:
        return first
    stubbed = _stub_stale(messages)
    second = done(stubbed)
    if second.fits:
        return second
    starts = turn_starts(messages)
    cut = _cut_old(messages, starts[-KEEP_RECENT] if len(starts) > KEEP_RECENT else 0)
    third = done(stubbed, cut)
    if third.fits or len(starts) < 2:
        return third
    # Fold the fewest oldest turns that make it fit (fewer folded is larger); never the last.
    placeholder = Message("user", "x" * (lead_reserve * CHARS_PER_TOKEN))
    low, high = 1, len(starts) - 1
    while low < high:
        mid = (low + high) // 2
        if count([*pinned, placeholder, *messages[starts[mid] :]]) <= limit:
            high = mid
        else:
            low = mid + 1
    return done(stubbed, cut, low)


def turn_starts(messages: Sequence[Message]) -> list[int]:
    """Where each turn starts: the first message, then every assistant message after it."""
    starts = [0]
    starts += [i for i, m in enumerate(messages) if m.role == "assistant" and i > 0]
    return starts


def _stub_stale(messages: list[Message]) -> int:
    """Replace, in place, each tool output a later call made stale; return how many."""
    calls: dict[str, ToolCall] = {}
    for m in messages:
        for c in m.tool_calls:
            calls[c.id] = c
    later: dict[str, str] = {}
    """Key of a call -> why an earlier identical observation is stale."""
    stubbed = 0
    for i in range(len(messages) - 1, -1, -1):
        m = messages[i]
        if m.role == "tool" and m.tool_call_id in calls:
            call = calls[m.tool_call_id]
            key = _key(call)
            if key is not None and key in later and not m.content.startswith("[stale"):
                messages[i] = replace(m, content=f"[stale: {_label(call)}: {later[key]}]")
                stubbed += 1
        for c in m.tool_calls:
            key = _key(c)
            if c.name in _WRITES:
                later[_path_key(c)] = (
                    "the file was written at a later step; read it again if needed"
                )
            elif key is not None:
                why = "the same call was made again at a later step"
                if c.name == "read_file":
                    why = "the file was read again at a later step"
                later.setdefault(key, why)
    return stubbed


def _key(call: ToolCall) -> str | None:
    if call.name == "read_file":
        return _path_key(call)
    if call.name in _REREAD:
        return f"{call.name}:{json.dumps(dict(call.arguments), sort_keys=True)}"
    return None


def _path_key(call: ToolCall) -> str:
    path = str(call.arguments.get("path", "")).removeprefix("./")
    return f"file:{path}"


def _label(call: ToolCall) -> str:
    if call.name == "exec":
        argv = call.arguments.get("argv")
        shown = " ".join(str(a) for a in argv) if isinstance(argv, list) else str(argv)
        return f"exec {shown}"
    target = call.arguments.get("path") or call.arguments.get("pattern") or ""
    return f"{call.name} {target}".strip()


def _cut_old(messages: list[Message], end: int) -> int:
    """Cut, in place, each large tool output before `end` to its head; return how many."""
    cut = 0
    for i in range(end):
        m = messages[i]
        if m.role == "tool" and len(m.content) > CUT_CHARS and not _marked(m.content):
            more = len(m.content) - CUT_CHARS
            marker = f"\n[... {more:,} {_CUT_MARK}; run the call again, or read a narrower range]"
            messages[i] = replace(m, content=m.content[:CUT_CHARS] + marker)
            cut += 1
    return cut


def _marked(content: str) -> bool:
    """Already a stub, or already cut (a cut output is still longer than `CUT_CHARS`)."""
    return content.startswith("[stale") or _CUT_MARK in content[CUT_CHARS:]

"""What a hook is: its event, the tool names it matches, its command and its timeout.

`match` is a glob on the tool name (`*` any run of characters, `?` one, `[...]` a set), and `|`
separates alternatives: `exec`, `write_file|edit_file`, `mcp__github__*`. Absent or `*`: every
tool. For `notification` hooks it matches the notification's kind (`approval_waiting`,
`run_finished`); `stop` hooks have no tool, so their `match` is not consulted.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any, Literal

HookEvent = Literal["pre_tool", "post_tool", "stop", "notification"]
EVENTS: tuple[HookEvent, ...] = ("pre_tool", "post_tool", "stop", "notification")
DEFAULT_TIMEOUT_S = 10.0
"""A hook runs at every matching call: one that needs longer says so with `timeout_s`."""


def matches(pattern: str | None, name: str) -> bool:
    """Whether `name` matches the hook's `match` (None, empty or `*`: everything)."""
    if pattern is None or pattern.strip() in ("", "*"):
        return True
    return any(fnmatchcase(name, alt.strip()) for alt in pattern.split("|") if alt.strip())


@dataclass(frozen=True, slots=True)
class Hook:
    """One configured hook."""

    event: HookEvent
    index: int
    """Its place among the event's hooks (user file first, then the project's)."""
    command: tuple[str, ...]
    """The argv run; a string in the file is run by `sh -c`."""
    match: str | None = None
    timeout_s: float = DEFAULT_TIMEOUT_S

    @property
    def label(self) -> str:
        """How the trace and the transcript name it: `pre_tool#0 (python3 deny.py)`."""
        shown = self.command[2] if self.command[:2] == ("sh", "-c") else " ".join(self.command)
        if len(shown) > 80:
            shown = shown[:79] + "…"
        return f"{self.event}#{self.index} ({shown})"

    @classmethod
    def from_entry(cls, event: HookEvent, index: int, entry: Mapping[str, Any]) -> Hook:
        """A checked `[[hooks.EVENT]]` entry (`config/shapes.check_hooks` checked its shape)."""
        raw = entry["command"]
        command = ("sh", "-c", raw) if isinstance(raw, str) else tuple(str(w) for w in raw)
        timeout = entry.get("timeout_s")
        return cls(
            event=event,
            index=index,
            command=command,
            match=entry.get("match"),
            timeout_s=float(timeout) if timeout is not None else DEFAULT_TIMEOUT_S,
        )


@dataclass(frozen=True, slots=True)
class HookSet:
    """Every configured hook by event, in the configuration's order."""

    hooks: tuple[Hook, ...] = ()

    @classmethod
    def from_config(cls, table: Mapping[str, Sequence[Mapping[str, Any]]]) -> HookSet:
        """From `Config.hooks()` (event -> entries); events are those of `EVENTS`."""
        hooks = [
            Hook.from_entry(event, i, entry)
            for event in EVENTS
            for i, entry in enumerate(table.get(event, ()))
        ]
        return cls(tuple(hooks))

    def __bool__(self) -> bool:
        """Whether any hook is configured."""
        return bool(self.hooks)

    def at(self, event: HookEvent, name: str = "") -> tuple[Hook, ...]:
        """The hooks of `event` whose `match` takes `name` (every `stop` hook)."""
        return tuple(
            h
            for h in self.hooks
            if h.event == event and (event == "stop" or matches(h.match, name))
        )

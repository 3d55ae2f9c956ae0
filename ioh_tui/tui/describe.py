"""Plain-text wording shared by the widgets: tool-call lines, numbers, durations, limit states.

Pure functions with no Textual import, so the wording is unit-tested without running an app.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:  # the events module is large; the app's first frame does not need it
    from ioh_tui.core.events import HookRan, SkillLoaded

LimitState = Literal["", "-warn", "-danger"]

WARN_AT = 0.75
"""Share of a budget from which a meter warns."""
DANGER_AT = 0.9
"""Share of a budget from which a meter is in danger."""

_VERBS = {
    "read_file": "read",
    "write_file": "write",
    "edit_file": "edit",
    "list_dir": "list",
    "find": "find",
    "grep": "grep",
    "exec": "run",
    "spawn_agent": "spawn",
}


RESOURCE_TOOLS = ("mcp_resources", "mcp_read_resource")
"""The MCP resource tools' names (`mcp/resources.py`), copied: the app does not load the SDK."""


def relative(path: str, root: Path | None) -> str:
    """`path` relative to the workspace `root` when it lies inside it, else unchanged.

    Args:
        path: A path as the model gave it.
        root: The workspace root, when known.

    Returns:
        The workspace-relative form (`.` for the root itself).
    """
    if root is None or not path.startswith("/"):
        return path or "."
    try:
        return Path(path).relative_to(root).as_posix() or "."
    except ValueError:
        return path


def tool_line(name: str, arguments: Mapping[str, Any], root: Path | None = None) -> str:
    """One line naming a tool call: a verb and a workspace-relative path (or its command).

    Args:
        name: The tool's name.
        arguments: The call's arguments.
        root: The workspace root, to shorten absolute paths.

    Returns:
        For example `edit calc.py`, `run pytest -q`, `grep 'add' in src`, `mcp fx/echo {...}`.
    """
    if name.startswith("mcp__") and "__" in name[5:]:
        # `mcp__SERVER__TOOL`: named as the policy names it, with its arguments.
        server, tool = name[5:].split("__", 1)
        args = json.dumps(dict(arguments), ensure_ascii=False) if arguments else ""
        return one_line(f"mcp {server}/{tool} {args}".rstrip(), 120)
    if name == RESOURCE_TOOLS[0]:
        return f"mcp resources {arguments.get('server') or ''}".rstrip()
    if name == RESOURCE_TOOLS[1]:
        # Named as the policy names a read: `SERVER/URI`.
        return one_line(f"mcp {arguments.get('server', '')}/{arguments.get('uri', '')}", 120)
    verb = _VERBS.get(name, name)
    path = relative(str(arguments.get("path", "")), root) if "path" in arguments else ""
    if name == "exec":
        argv = arguments.get("argv")
        if isinstance(argv, list) and all(isinstance(a, str) for a in argv):
            return f"{verb} {shlex.join(argv)}"
        return f"{verb} (no command)"
    if name == "grep":
        where = f" in {path}" if path else ""
        return f"{verb} {shlex.quote(str(arguments.get('pattern', '')))}{where}"
    if name == "find":
        return f"{verb} {arguments.get('pattern', '')}"
    if name == "spawn_agent":
        return f"{verb} agent: {one_line(str(arguments.get('goal', '')), 60)}"
    if name == "list_dir":
        return f"{verb} {path or '.'}"
    return f"{verb} {path}".rstrip()


def one_line(text: str, width: int) -> str:
    """`text` on one line, cut to `width` characters with an ellipsis when longer."""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: max(0, width - 1)] + "…"


def tokens(n: float) -> str:
    """A token count in short form: `950`, `1.2k`, `3.4M`."""
    if n < 1000:
        return f"{int(n)}"
    if n < 1_000_000:
        return f"{n / 1000:.1f}k"
    return f"{n / 1_000_000:.1f}M"


def duration(seconds: float) -> str:
    """Seconds as `m:ss` (or `h:mm:ss` past an hour)."""
    total = max(0, int(seconds))
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}:{minutes:02d}:{secs:02d}"
    return f"{minutes}:{secs:02d}"


def money(usd: float) -> str:
    """A cost in dollars, with enough digits for small sums."""
    return f"${usd:.4f}" if usd < 1 else f"${usd:.2f}"


def limit_state(value: float, limit: float | None) -> LimitState:
    """The state class of a meter: `-warn` near its limit, `-danger` at or very near it."""
    if not limit or limit <= 0:
        return ""
    share = value / limit
    if share >= DANGER_AT:
        return "-danger"
    if share >= WARN_AT:
        return "-warn"
    return ""


RECOVERY = "recovery"
"""The layer of a resume's ask about a call a crash cut (`engine/recovery.RECOVERY_LAYER`; the
engine is not imported here, which the start screen's first frame must not wait for)."""


def why_asked(rule: str | None, layer: str | None, act: str) -> str:
    """Why the policy asked: the rule and its layer, or the act's default tier."""
    if layer == RECOVERY:
        return "a crash cut this call: it may have run in part; approve makes it again"
    if rule is None:
        return f"default tier ({act} asks unless a rule allows it)"
    return f"rule `{rule}` in layer `{layer or '?'}`"


_COMMAND = re.compile(r"`([^`]+)`")


def gate_command(criterion: str) -> str:
    """The command of a criterion description (the text between its first backticks), if any."""
    match = _COMMAND.search(criterion)
    return match.group(1) if match else criterion


def tail(text: str, lines: int) -> str:
    """The last `lines` lines of `text` (without a trailing empty line)."""
    parts = text.rstrip("\n").split("\n")
    return "\n".join(parts[-lines:])


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def visible(text: str) -> tuple[str, int]:
    """`text` with control characters shown as escapes, so none can drive the terminal.

    Returns:
        The safe text and how many characters were escaped.
    """
    count = 0

    def escape(match: re.Match[str]) -> str:
        nonlocal count
        count += 1
        return f"\\x{ord(match.group(0)):02x}"

    return _CONTROL.sub(escape, text), count


def extension_line(event: HookRan | SkillLoaded) -> tuple[str, str]:
    """A hook's run or a skill's load as one transcript line, and its style class."""
    from ioh_tui.core.events import SkillLoaded

    if isinstance(event, SkillLoaded):
        what = f"file {event.file} of " if event.file else ""
        return f"skill: loaded {what}{event.name} ({event.path})", "-skill"
    on = f" on {event.tool}" if event.tool else ""
    said = f": {one_line(event.reason, 160)}" if event.reason else ""
    return f"hook {event.label}{on} → {event.outcome}{said}", f"-hook -hook-{event.outcome}"

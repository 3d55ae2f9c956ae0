"""Engine events as ACP `session/update`s: message and thought chunks, tool calls, usage.

One `Translator` per run: it remembers which tool call each agent has open (an ask belongs to
it), the diff shown when an edit started (its permission request and its end show the same),
and the cost so far (`usage_update` carries a total).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acp import (
    start_tool_call,
    text_block,
    tool_content,
    tool_diff_content,
    update_agent_message_text,
    update_agent_thought_text,
    update_tool_call,
)
from acp.schema import (
    AgentMessageChunk,
    AgentThoughtChunk,
    ContentToolCallContent,
    Cost,
    FileEditToolCallContent,
    TerminalToolCallContent,
    ToolCallLocation,
    ToolCallProgress,
    ToolCallStart,
    ToolCallStatus,
    ToolKind,
    UsageUpdate,
)

from ioh_tui.core import events as ev
from ioh_tui.core.acts import Act, Effect
from ioh_tui.core.redact import Redactor
from ioh_tui.policy import Policy
from ioh_tui.tools.beneath import TooLarge, locate, read_spot
from ioh_tui.tools.workspace import Escape, Workspace

Update = AgentMessageChunk | AgentThoughtChunk | ToolCallStart | ToolCallProgress | UsageUpdate
Content = ContentToolCallContent | FileEditToolCallContent | TerminalToolCallContent

KINDS: Mapping[str, ToolKind] = {
    "read_file": "read",
    "list_dir": "read",
    "read_document": "read",
    "git_status": "read",
    "git_diff": "read",
    "git_log": "read",
    "git_show": "read",
    "ocr": "read",
    "barcode_read": "read",
    "skill": "read",
    "write_file": "edit",
    "edit_file": "edit",
    "write_document": "edit",
    "edit_document": "edit",
    "pdf_watermark": "edit",
    "pdf_fill_form": "edit",
    "pdf_merge": "edit",
    "pdf_split": "edit",
    "barcode_write": "edit",
    "git_add": "edit",
    "git_commit": "edit",
    "exec": "execute",
    "grep": "search",
    "find": "search",
    "note": "think",
    "mcp_read_resource": "read",
    "mcp_resources": "search",
}
"""Our tool names to ACP's tool kinds; anything else (sub-agents, branches, MCP tools) is
`other`, save an MCP tool named for fetching (`fetch`). A resource read is a read."""

MAX_SHOWN = 8000
"""Characters of a tool's output or a file sent in one update (the rest is in the store)."""


def tool_kind(name: str) -> ToolKind:
    """The ACP kind of one of our tools."""
    if name in KINDS:
        return KINDS[name]
    if name.startswith("mcp__") and "fetch" in name.rsplit("__", 1)[-1].lower():
        return "fetch"
    return "other"


def tool_title(name: str, arguments: Mapping[str, Any]) -> str:
    """A one-line title: the tool and what it acts on (`exec pytest -q`, `write_file a.py`)."""
    if isinstance(argv := arguments.get("argv"), list):
        return f"{name} {' '.join(str(a) for a in argv)}"
    for key in ("path", "uri", "pattern", "query", "goal", "rev", "message", "name"):
        if isinstance(value := arguments.get(key), str) and value:
            return f"{name} {value.splitlines()[0][:120]}"
    return name


def _read(root: Path, rel: str, policy: Policy) -> str | None:
    """The file's text as `read_file` may read it: beneath the root, and a read the policy allows.

    Reached through descriptors (`tools/beneath.py`), so a symlink swapped in cannot point it
    elsewhere; a file the policy keeps from reads (`.env`, the host's secrets) is not shown.
    """
    if policy.explain(Act.READ, rel).effect is Effect.DENY:
        return None
    try:
        with locate(root.resolve(), rel) as spot:
            return read_spot(spot, 4 * MAX_SHOWN * 16).decode("utf-8")
    except (OSError, Escape, TooLarge, UnicodeDecodeError):
        return None


def edit_diff(
    root: Path,
    name: str,
    arguments: Mapping[str, Any],
    mask: Callable[[str], str] = str,
    policy: Policy | None = None,
) -> FileEditToolCallContent | None:
    """The diff an edit is about to make (`write_file`, `edit_file`), from the file as it is now.

    Only a file inside the workspace that `policy` (default: the built-in tiers) lets be read
    is read, as the tool would read it, and what is read is passed through `mask` (the
    configured keys) before it is shown.
    """
    path = arguments.get("path")
    if name not in ("write_file", "edit_file") or not isinstance(path, str):
        return None
    try:
        rel = Workspace.at(root).normalise(path)
    except Escape:
        return None
    where = root.resolve() / rel
    read = _read(root, rel, policy or Policy.default())
    old = mask(read) if read is not None else None
    if name == "write_file":
        content = arguments.get("content")
        return tool_diff_content(str(where), str(content), old) if content is not None else None
    old_text, new_text = arguments.get("old_text"), arguments.get("new_text")
    if not isinstance(old_text, str) or not isinstance(new_text, str):
        return None
    if old is not None and old_text in old:
        return tool_diff_content(str(where), old.replace(old_text, new_text, 1), old)
    return tool_diff_content(str(where), new_text, old_text)


@dataclass
class Translator:
    """Turns one run's events into updates (`updates`); keeps what a permission request needs."""

    root: Path
    policy: Policy = field(default_factory=Policy.default)
    """The run's policy: a diff shows only what it lets be read."""
    open_calls: dict[int, str] = field(default_factory=dict)
    """The ACP id of each agent's tool call under way (an ask belongs to it)."""
    kinds: dict[str, ToolKind] = field(default_factory=dict)
    diffs: dict[str, FileEditToolCallContent] = field(default_factory=dict)
    titles: dict[str, str] = field(default_factory=dict)
    running: set[str] = field(default_factory=set)
    window: int | None = None
    cost_usd: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0
    run_id: int | None = None
    redactor: Redactor = field(default_factory=Redactor.configured)
    """Masks the keys in what is read from disk (the events come masked already)."""

    def updates(self, event: ev.Event) -> list[Update]:
        """What `event` shows an ACP client (often nothing)."""
        sub = event.agent_id is not None and event.agent_id != event.run_id
        label = f"[agent-{event.agent_id}] " if sub else ""
        match event:
            case ev.RunStarted() if not sub:
                self.run_id, self.window = event.run_id, event.context_window
                return []
            case ev.TextDelta() if sub:
                return [update_agent_thought_text(label + event.text)]
            case ev.TextDelta():
                return [update_agent_message_text(event.text)]
            case ev.ThinkingDelta():
                return [update_agent_thought_text(label + event.text)]
            case ev.NoteAdded():
                return [update_agent_thought_text(f"{label}note: {event.text}\n")]
            case ev.RetryScheduled():
                return [
                    update_agent_thought_text(
                        f"{label}({event.error_kind}; retrying: what this step said so far is "
                        "void)\n"
                    )
                ]
            case ev.UsageReported():
                return self._usage(event, sub)
            case _:
                return self._tool_updates(event, label)

    def _usage(self, event: ev.UsageReported, sub: bool) -> list[Update]:
        self.input_tokens += event.input_tokens
        self.output_tokens += event.output_tokens
        self.cost_usd += event.cost_usd or 0.0
        if sub or self.window is None:
            return []
        cost = Cost(amount=round(self.cost_usd, 6), currency="USD") if self.cost_usd else None
        used = min(event.input_tokens + event.output_tokens, self.window)
        return [UsageUpdate(session_update="usage_update", used=used, size=self.window, cost=cost)]

    def _tool_updates(self, event: ev.Event, label: str) -> list[Update]:
        agent = event.agent_id if event.agent_id is not None else event.run_id
        match event:
            case ev.ToolCallStarted():
                return [self._started(event, agent, label)]
            case ev.ApprovalResolved() if event.decision == "approve":
                return self._in_progress(self.open_calls.get(agent))
            case ev.ToolOutput():
                return self._in_progress(self._id(event.step, event.call_id, agent))
            case ev.ToolCallFinished():
                return [self._finished(event, agent)]
            case ev.VerificationStarted():
                gate = f"gate-{agent}-{event.step}"
                return [
                    start_tool_call(
                        gate,
                        f"{label}gate: {event.criterion}",
                        kind="execute",
                        status="in_progress",
                    )
                ]
            case ev.VerificationFinished():
                gate = f"gate-{agent}-{event.step}"
                status: ToolCallStatus = "completed" if event.status == "passed" else "failed"
                text = f"{event.status}: {event.detail}"[:MAX_SHOWN]
                return [update_tool_call(gate, status=status, content=[_text(text)])]
            case _:
                return []

    def _id(self, step: int, call_id: str, agent: int) -> str:
        return f"{agent}-{step}-{call_id}"

    def _started(self, event: ev.ToolCallStarted, agent: int, label: str) -> ToolCallStart:
        acp_id = self._id(event.step, event.call_id, agent)
        self.open_calls[agent] = acp_id
        kind = tool_kind(event.name)
        title = label + tool_title(event.name, event.arguments)
        self.kinds[acp_id], self.titles[acp_id] = kind, title
        content: list[Content] = []
        diff = edit_diff(self.root, event.name, event.arguments, self.redactor.text, self.policy)
        if diff is not None:
            self.diffs[acp_id] = diff
            content.append(diff)
        path = event.arguments.get("path")
        locations = (
            [ToolCallLocation(path=str((self.root / path).resolve()))]
            if isinstance(path, str) and path
            else None
        )
        return start_tool_call(
            acp_id,
            title,
            kind=kind,
            status="pending",
            content=content or None,
            locations=locations,
            raw_input=dict(event.arguments),
        )

    def _in_progress(self, acp_id: str | None) -> list[Update]:
        if acp_id is None or acp_id in self.running:
            return []
        self.running.add(acp_id)
        return [update_tool_call(acp_id, status="in_progress")]

    def _finished(self, event: ev.ToolCallFinished, agent: int) -> ToolCallProgress:
        acp_id = self._id(event.step, event.call_id, agent)
        if self.open_calls.get(agent) == acp_id:
            del self.open_calls[agent]
        content: list[Content] = []
        if event.ok and (diff := self.diffs.get(acp_id)) is not None:
            content.append(diff)
        shown = event.output or event.summary
        if event.refused:
            shown = f"refused: {event.summary}"
        if shown:
            content.append(_text(shown[:MAX_SHOWN]))
        return update_tool_call(
            acp_id,
            status="completed" if event.ok else "failed",
            content=content,
            raw_output={"ok": event.ok, "refused": event.refused, "summary": event.summary},
        )


def _text(text: str) -> ContentToolCallContent:
    return tool_content(text_block(text))

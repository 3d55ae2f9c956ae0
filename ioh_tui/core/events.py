"""Engine events: frozen dataclasses with a `kind`, and their one JSON form (interface.md §3).

Every event names its run. Events of a sub-agent tree also carry `agent_id` (the agent's own run id)
and `parent_id` (its parent's run id, None for the root); `run_id` is then the root's run id, so one
filter selects the whole tree.

Just over 400 lines: one dataclass per event of the contract, each a few lines; splitting them
would scatter the one list the contract and `to_json` are read against.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar


@dataclass(frozen=True, kw_only=True, slots=True)
class Event:
    """Fields every event has."""

    kind: ClassVar[str] = "event"
    run_id: int
    agent_id: int | None = None
    """The agent's own run id, in a tree; None in a flat run."""
    parent_id: int | None = None
    """The parent agent's run id, in a tree; None for the root and in a flat run."""


@dataclass(frozen=True, kw_only=True, slots=True)
class RunStarted(Event):
    """A run (or a resume of it) began."""

    kind: ClassVar[str] = "run_started"
    goal: str
    mode: str
    """`single_file` or `workspace`."""
    budgets: dict[str, Any]
    provider: str = ""
    model: str | None = None
    sandbox: str = ""
    """The sandbox backend in force for commands."""
    resumed_from_step: int | None = None
    tokens: int = 0
    """What the run's committed steps spent before this drive (0 for a new run)."""
    cost_usd: float | None = None
    """Their cost in dollars, where the provider reported one (None: none reported)."""
    elapsed_s: float = 0.0
    """Seconds since the run first started, by the store's clock: what a time budget counts."""
    context_window: int | None = None
    """The model's context window in tokens, as the engine fits requests to it."""
    instructions: str | None = None
    """The project instructions file pinned in every request (`AGENTS.md`), if one was found."""
    skills: list[str] = dataclasses.field(default_factory=list)
    """The skills named in every request (the `skill` tool loads one)."""
    warnings: list[str] = dataclasses.field(default_factory=list)
    """What the run's set-up skipped and why (a `SKILL.md` without front matter, ...)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class StepStarted(Event):
    """A step began; steps are numbered from 1."""

    kind: ClassVar[str] = "step_started"
    step: int


@dataclass(frozen=True, kw_only=True, slots=True)
class TextDelta(Event):
    """A piece of the model's answer; a step's pieces concatenate to its text."""

    kind: ClassVar[str] = "text_delta"
    step: int
    text: str


@dataclass(frozen=True, kw_only=True, slots=True)
class ThinkingDelta(Event):
    """A piece of the model's reasoning."""

    kind: ClassVar[str] = "thinking_delta"
    step: int
    text: str


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolCallStarted(Event):
    """A tool call is about to be dispatched (announced before it runs)."""

    kind: ClassVar[str] = "tool_call_started"
    step: int
    call_id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolOutput(Event):
    """Live output of a running command (a tail for the app; the whole output is in the result)."""

    kind: ClassVar[str] = "tool_output"
    step: int
    call_id: str
    text: str


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolCallFinished(Event):
    """A tool call ended: ran (ok or not) or was refused."""

    kind: ClassVar[str] = "tool_call_finished"
    step: int
    call_id: str
    name: str
    ok: bool
    refused: bool
    summary: str
    """The observation's first line."""
    output: str = ""
    """What the model was told (already capped)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ApprovalRequested(Event):
    """A policy `ask`: a person (or an approver) must decide."""

    kind: ClassVar[str] = "approval_requested"
    request_id: int
    act: str
    target: str
    rule: str | None
    layer: str | None
    step: int = 0
    content: str | None = None
    """What would be written, for writes."""
    preview: str | None = None
    """A unified diff of the write, when there is one."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ApprovalResolved(Event):
    """An approval was answered."""

    kind: ClassVar[str] = "approval_resolved"
    request_id: int
    decision: str
    """`approve`, `deny` or `defer`."""
    modified: bool
    remembered: list[str]
    """Rules kept by a `remember` answer, as `act effect pattern`."""
    reason: str | None = None
    by: str = "approver"


@dataclass(frozen=True, kw_only=True, slots=True)
class UsageReported(Event):
    """Tokens and timing of one model call."""

    kind: ClassVar[str] = "usage"
    step: int
    input_tokens: int
    output_tokens: int
    ttft_ms: float | None
    latency_ms: float | None
    cost_usd: float | None
    cache_read_tokens: int = 0


@dataclass(frozen=True, kw_only=True, slots=True)
class RetryScheduled(Event):
    """A model call failed and will be tried again."""

    kind: ClassVar[str] = "retry"
    step: int
    attempt: int
    error_kind: str
    delay_ms: int


@dataclass(frozen=True, kw_only=True, slots=True)
class FellBack(Event):
    """The provider's retries were spent and the fallback provider took over."""

    kind: ClassVar[str] = "fallback"
    step: int
    from_provider: str
    to_provider: str


@dataclass(frozen=True, kw_only=True, slots=True)
class StallWarned(Event):
    """The agent repeated itself (or made no progress) and was told once to change approach."""

    kind: ClassVar[str] = "stall_warning"
    step: int
    detail: str


@dataclass(frozen=True, kw_only=True, slots=True)
class ContextCompacted(Event):
    """The oldest turns were summarised by the model to fit the window (the summary is stored)."""

    kind: ClassVar[str] = "context_compacted"
    step: int
    tokens_before: int
    tokens_after: int


@dataclass(frozen=True, kw_only=True, slots=True)
class NoteAdded(Event):
    """The agent kept a note (pinned in every later turn's context)."""

    kind: ClassVar[str] = "note_added"
    step: int
    text: str


@dataclass(frozen=True, kw_only=True, slots=True)
class StepFinished(Event):
    """A step was committed."""

    kind: ClassVar[str] = "step_finished"
    step: int
    tokens: int
    """This step's tokens."""
    total_tokens: int
    """The run's tokens so far, across resumes."""
    tool_calls: int


@dataclass(frozen=True, kw_only=True, slots=True)
class AgentSpawned(Event):
    """A sub-agent was created."""

    kind: ClassVar[str] = "agent_spawned"
    goal: str


@dataclass(frozen=True, kw_only=True, slots=True)
class AgentFinished(Event):
    """A sub-agent ended."""

    kind: ClassVar[str] = "agent_finished"
    outcome: str


@dataclass(frozen=True, kw_only=True, slots=True)
class BudgetsChanged(Event):
    """A supervisor raised the run's budgets while it ran; these are the budgets now in force."""

    kind: ClassVar[str] = "budgets_changed"
    budgets: dict[str, Any]


@dataclass(frozen=True, kw_only=True, slots=True)
class TreeStatus(Event):
    """The fleet's counts and the tree-wide token ledger, after any change."""

    kind: ClassVar[str] = "tree_status"
    agents: int
    """Agents created so far, root included."""
    working: int
    queued: int
    done: int
    tokens: int
    token_ceiling: int | None


@dataclass(frozen=True, kw_only=True, slots=True)
class VerificationStarted(Event):
    """The success criterion is being checked."""

    kind: ClassVar[str] = "verification_started"
    criterion: str
    step: int = 0


@dataclass(frozen=True, kw_only=True, slots=True)
class VerificationFinished(Event):
    """The success criterion was checked."""

    kind: ClassVar[str] = "verification_finished"
    status: str
    """`passed`, `failed` or `errored`."""
    detail: str
    step: int = 0


@dataclass(frozen=True, kw_only=True, slots=True)
class HookRan(Event):
    """A configured hook ran (docs/extending.md, "Hooks"), and what came of it."""

    kind: ClassVar[str] = "hook_ran"
    step: int
    hook: str
    """Its event: `pre_tool`, `post_tool`, `stop` or `notification`."""
    label: str
    """`EVENT#INDEX (command)`, as the trace names it."""
    outcome: str
    """`allow`, `deny`, `ask`, `rewrite`, `add`, `block`, `none` (no opinion), `ignored` (a
    block past the limit), `notified`, or `failed` (it decided nothing)."""
    tool: str | None = None
    call_id: str | None = None
    reason: str | None = None
    """The hook's reason, what it added, or why it failed."""
    duration_ms: float = 0.0


@dataclass(frozen=True, kw_only=True, slots=True)
class SkillLoaded(Event):
    """The model loaded a skill's instructions (or one of its files) with the `skill` tool."""

    kind: ClassVar[str] = "skill_loaded"
    step: int
    name: str
    path: str
    """The skill's `SKILL.md`."""
    file: str | None = None
    """The skill's file the model asked for, if any."""


@dataclass(frozen=True, kw_only=True, slots=True)
class RunFinished(Event):
    """The run ended (or paused); the last event of a run."""

    kind: ClassVar[str] = "run_finished"
    outcome: str
    steps: int
    tokens: int
    detail: str = ""


EngineEvent = (
    RunStarted
    | StepStarted
    | TextDelta
    | ThinkingDelta
    | ToolCallStarted
    | ToolOutput
    | ToolCallFinished
    | ApprovalRequested
    | ApprovalResolved
    | UsageReported
    | RetryScheduled
    | FellBack
    | StallWarned
    | ContextCompacted
    | NoteAdded
    | StepFinished
    | AgentSpawned
    | AgentFinished
    | TreeStatus
    | BudgetsChanged
    | VerificationStarted
    | VerificationFinished
    | HookRan
    | SkillLoaded
    | RunFinished
)

EVENT_TYPES: dict[str, type[Event]] = {
    cls.kind: cls
    for cls in (
        RunStarted,
        StepStarted,
        TextDelta,
        ThinkingDelta,
        ToolCallStarted,
        ToolOutput,
        ToolCallFinished,
        ApprovalRequested,
        ApprovalResolved,
        UsageReported,
        RetryScheduled,
        FellBack,
        StallWarned,
        ContextCompacted,
        NoteAdded,
        StepFinished,
        AgentSpawned,
        AgentFinished,
        TreeStatus,
        BudgetsChanged,
        VerificationStarted,
        VerificationFinished,
        HookRan,
        SkillLoaded,
        RunFinished,
    )
}


def to_json(event: Event) -> dict[str, Any]:
    """The event as one JSON object: `event` first, `agent_id`/`parent_id` only in a tree."""
    out: dict[str, Any] = {"event": event.kind}
    for f in dataclasses.fields(event):
        value = getattr(event, f.name)
        if f.name in ("agent_id", "parent_id") and event.agent_id is None:
            continue
        out[f.name] = value
    return out


def from_json(data: dict[str, Any]) -> Event:
    """Rebuild an event from `to_json`'s form (unknown keys are ignored)."""
    cls = EVENT_TYPES[data["event"]]
    names = {f.name for f in dataclasses.fields(cls)}
    return cls(**{k: v for k, v in data.items() if k in names})


__all__ = ["EVENT_TYPES", "EngineEvent", "Event", "from_json", "to_json"]

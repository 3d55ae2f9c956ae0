"""Typed rows: what the store returns, one frozen dataclass per table (JSON columns decoded).

Fields follow the table's column order, so `dataclasses.asdict(row)` is the row as the table
holds it (the `show --json` trace prints exactly that).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from ioh_tui.core.acts import Act, Answer, ApprovalStatus, DecisionKind
from ioh_tui.core.outcomes import Outcome, RunStatus
from ioh_tui.core.transcript import Image, Message, Role, Thought, ToolCall


@dataclass(frozen=True, slots=True)
class RunRow:
    """One row of `runs`, with its totals."""

    id: int
    goal: str
    mode: str
    root: str
    subject: str | None
    contract: dict[str, Any]
    provider: str
    model: str | None
    sandbox: str
    parent_run_id: int | None
    root_run_id: int | None
    depth: int
    agent_label: str
    status: RunStatus
    outcome: Outcome | None
    detail: str
    started_at: str
    finished_at: str | None
    steps: int
    tokens: int


@dataclass(frozen=True, slots=True)
class StepRow:
    """One committed step (`steps`)."""

    id: int
    run_id: int
    step: int
    decision: str
    """The step's tool-call summaries, `; `-joined (or `no tool call`)."""
    tool_call: str
    """The step's calls as `name:{arguments}`, ` | `-joined."""
    tokens: int
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    committed_at: str


@dataclass(frozen=True, slots=True)
class MessageRow:
    """One committed transcript message (`messages`), with where it sits in the run."""

    step: int
    seq: int
    role: Role
    content: str
    tool_calls: tuple[ToolCall, ...]
    tool_call_id: str | None
    images: tuple[Image, ...] = ()
    thoughts: tuple[Thought, ...] = ()

    @property
    def message(self) -> Message:
        """The message as a resumed drive sends it again."""
        return Message(
            self.role, self.content, self.tool_calls, self.tool_call_id, self.images, self.thoughts
        )


@dataclass(frozen=True, slots=True)
class CallRecord:
    """A finished tool call as a step writes it (`StepCommit.tool_calls`)."""

    call_id: str
    name: str
    arguments: dict[str, Any]
    ok: bool
    refused: bool
    summary: str
    output: str


@dataclass(frozen=True, slots=True)
class ToolCallRow:
    """One recorded tool call (`tool_calls`)."""

    id: int
    run_id: int
    step: int
    seq: int
    call_id: str
    name: str
    arguments: dict[str, Any]
    ok: bool
    refused: bool
    summary: str
    output: str


@dataclass(frozen=True, slots=True)
class AttemptRow:
    """One journalled mutating call (`tool_attempts`): opened before it runs, closed after."""

    id: int
    run_id: int
    step: int
    seq: int
    call_id: str
    name: str
    arguments: dict[str, Any]
    intent: dict[str, Any] | None
    """What a write was about to write (path, sha256, output), noted just before the effect."""
    result: dict[str, Any] | None
    """The result once closed: output, ok, refused, changed."""
    started_at: str
    completed_at: str | None
    resolution: str | None


@dataclass(frozen=True, slots=True)
class EventRow:
    """One logged engine event (`events`)."""

    id: int
    kind: str
    json: dict[str, Any]
    at: str


@dataclass(frozen=True, slots=True)
class ProviderCallRow:
    """One model-call attempt, for accounting (`provider_calls`)."""

    id: int
    run_id: int
    step: int
    attempt: int
    provider: str
    model: str | None
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    reasoning_tokens: int
    cost_usd: float | None
    latency_ms: float | None
    ttft_ms: float | None
    stop_reason: str | None
    failure: str | None
    at: str


@dataclass(frozen=True, slots=True)
class GateAttemptRow:
    """One evaluation of the success criterion (`gate_attempts`)."""

    id: int
    run_id: int
    step: int
    criterion: str
    status: str
    detail: str
    at: str


@dataclass(frozen=True, slots=True)
class SummaryRow:
    """One compaction (`summaries`): the model's summary of the run's first `turns` turns."""

    id: int
    run_id: int
    step: int
    """The step whose request needed the room."""
    turns: int
    text: str
    tokens_before: int
    tokens_after: int
    at: str


@dataclass(frozen=True, slots=True)
class SandboxEventRow:
    """One sandbox lifecycle fact (`sandbox_events`): create, exec, cap hit, destroy."""

    id: int
    run_id: int
    step: int
    kind: str
    backend: str
    detail: str
    at: str


@dataclass(frozen=True, slots=True)
class PolicyEventRow:
    """One refusal or decision (`policy_events`)."""

    id: int
    run_id: int
    step: int
    kind: Literal["refusal", "decision"]
    act: Act
    target: str
    rule: str | None
    layer: str | None
    decision: DecisionKind | None
    source: str | None
    at: str


@dataclass(frozen=True, slots=True)
class ApprovalRow:
    """One request (`approvals`), exactly as shown, with its resolution and its run's goal."""

    id: int
    run_id: int
    step: int
    call_id: str
    tool: str
    act: Act
    target: str
    content: str | None
    preview: str | None
    rule: str | None
    layer: str | None
    agent_label: str
    status: ApprovalStatus
    decided_by: str | None
    reason: str | None
    performed_target: str | None
    performed_content: str | None
    remembered: tuple[str, ...]
    created_at: str
    resolved_at: str | None
    goal: str
    forged: bool = False
    """The row carried an answer whose seal did not verify: it reads as pending (`seal.py`)."""

    @property
    def answer(self) -> Answer:
        """The answer recorded in the row (anything but a denial reads as an approval)."""
        return Answer(
            "deny" if self.status == "deny" else "approve",
            self.reason,
            self.performed_target,
            self.performed_content,
            self.remembered,
        )

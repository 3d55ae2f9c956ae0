"""Human (or automatic) decisions on a policy `ask`: the request, the five answers, approvers."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal, Protocol

from ioh_tui.core.acts import Act, Answer, DecisionKind
from ioh_tui.policy.builtin import host_executed
from ioh_tui.policy.types import Rule


@dataclass(frozen=True, slots=True)
class ApprovalRequest:
    """Everything a person needs to decide one action, exactly as it is shown and stored."""

    act: Act
    target: str
    content: str | None = None
    """For writes: the full new content (or the replacement text of an edit)."""
    preview: str | None = None
    """For writes and edits: a unified diff of the change."""
    rule: str | None = None
    """The rule that asked (None: the act's default tier)."""
    layer: str | None = None
    source: str | None = None
    """The file the asking rule's layer was read from (None: built in, or the default)."""
    workspace: Path | None = None
    """The run's workspace (a rule remembered for the project is saved there)."""
    request_id: int = 0
    run_id: int = 0
    agent_id: int | None = None
    """The asking agent's run id in a tree."""
    agent_label: str = "root"
    step: int = 0
    goal: str = ""
    tool: str = ""
    """The tool call behind the request (`write_file`, `exec`, ...)."""


RememberScope = Literal["run", "project", "user", "file"]
"""How long a remembered rule lasts: this run; this project's or this user's later runs too
(`.ioh-tui/policy.toml`, loaded by every run); or saved to a policy file given as `--policy`."""


@dataclass(frozen=True, slots=True)
class Decision:
    """One of the five answers: approve, rewrite, remember, deny (with a reason), defer.

    A rewrite is an approval carrying `target`/`content` that replace the request's; a remember is
    an approval carrying rules to keep (`scope="run"` for the rest of the run; `"project"` or
    `"user"` to also save them for later runs; `"file"` to save them to `remember_file`). Every
    approved action is re-checked against the policy: neither a rewrite nor a remembered rule can
    cross a deny.
    """

    kind: DecisionKind
    reason: str = ""
    target: str | None = None
    content: str | None = None
    remember: tuple[Rule, ...] = ()
    scope: RememberScope = "run"
    remember_file: Path | None = None

    @classmethod
    def approve(cls) -> Decision:
        """Approve the action as asked."""
        return cls("approve")

    @classmethod
    def rewrite(cls, *, target: str | None = None, content: str | None = None) -> Decision:
        """Approve a rewritten action instead of the one asked."""
        return cls("approve", target=target, content=content)

    @classmethod
    def remembering(
        cls, *rules: Rule, scope: RememberScope = "run", file: Path | None = None
    ) -> Decision:
        """Approve and keep rules (for this run, or saved for later runs too)."""
        return cls("approve", remember=tuple(rules), scope=scope, remember_file=file)

    @classmethod
    def deny(cls, reason: str = "denied") -> Decision:
        """Refuse; the model reads the reason."""
        return cls("deny", reason=reason or "denied")

    @classmethod
    def defer(cls) -> Decision:
        """Park the decision: the run pauses durably and resumes later."""
        return cls("defer")

    @property
    def modified(self) -> bool:
        """Whether this approval rewrote the action."""
        return self.target is not None or self.content is not None

    def to_row(self, request: ApprovalRequest | None = None) -> Answer:
        """The answer this decision writes into its request's `approvals` row.

        A rewrite records the action as performed (the request fills in the half a rewrite left
        unchanged); a denial, its reason; a remember, its rules. A deferral is no answer (the
        request stays pending), so it has no row form.

        Args:
            request: The request answered; without it a rewrite records only what it changed.

        Raises:
            ValueError: For a deferral.
        """
        if self.kind == "defer":
            raise ValueError("a deferred decision leaves its request pending: nothing to write")
        if self.kind == "deny":
            return Answer("deny", reason=self.reason)
        target, content = self.target, self.content
        if self.modified and request is not None:
            performed = self.applied_to(request)
            target, content = performed.target, performed.content
        return Answer(
            "approve",
            performed_target=target,
            performed_content=content,
            remembered=tuple(rule.describe() for rule in self.remember),
        )

    @classmethod
    def from_row(cls, answer: Answer) -> Decision:
        """The decision an answered `approvals` row records (`ApprovalRow.answer`)."""
        if answer.status == "deny":
            return cls.deny(answer.reason or "denied")
        return cls(
            "approve",
            target=answer.performed_target,
            content=answer.performed_content,
            remember=tuple(Rule.parse(text) for text in answer.remembered),
        )

    def applied_to(self, request: ApprovalRequest) -> ApprovalRequest:
        """The request as it will be performed (the rewrite, if any)."""
        return replace(
            request,
            target=self.target if self.target is not None else request.target,
            content=self.content if self.content is not None else request.content,
        )


class Approver(Protocol):
    """Decides asks. May take as long as it likes: the run waits."""

    async def decide(self, request: ApprovalRequest) -> Decision:
        """Answer one request."""
        ...


@dataclass(slots=True)
class ApproveAll:
    """Approves everything but a write to a file the host runs (and records what it saw)."""

    seen: list[ApprovalRequest] = field(default_factory=list)

    async def decide(self, request: ApprovalRequest) -> Decision:
        """Approve, except a write to a file the host runs: only a person may allow that."""
        self.seen.append(request)
        if request.act is Act.WRITE and (protected := host_executed(request.target)):
            return Decision.deny(
                f"{request.target} is run by the host ({protected[1]}); a blanket approval does "
                "not cover it: a person must approve it, or a rule must name it exactly"
            )
        return Decision.approve()


@dataclass(slots=True)
class DenyAll:
    """Denies everything with one reason."""

    reason: str = "no approver available"

    async def decide(self, request: ApprovalRequest) -> Decision:
        """Deny."""
        return Decision.deny(self.reason)


@dataclass(slots=True)
class DeferAll:
    """Defers everything (headless `--on-approval defer`)."""

    async def decide(self, request: ApprovalRequest) -> Decision:
        """Defer."""
        return Decision.defer()


class WaitApprover:
    """Waits for an answer from any process (headless `--on-approval wait`); never guesses one.

    It answers nothing itself: the decision gate (`engine/decide.py`) races it against the
    request's row, polled every `POLL_S`, so an answer sealed into the store by the app's queue or
    by `ioh-tui resume N --decide` in another process is taken within that poll. What this
    approver gives is the end of the wait: a deferral after `timeout_s`, or at once when `stop` is
    called (SIGTERM), which pauses the run (`awaiting_approval`, exit 4) with the request pending.
    """

    def __init__(
        self,
        timeout_s: float | None = None,
        announce: Callable[[ApprovalRequest], None] | None = None,
    ) -> None:
        """Wait `timeout_s` seconds (None: until answered or stopped); `announce` each ask."""
        self.timeout_s = timeout_s
        self.announce = announce
        self.waiting = 0
        """Asks waiting now."""
        self._stopped = asyncio.Event()

    @property
    def stopped(self) -> bool:
        """Whether `stop` was called (every ask from then on is deferred at once)."""
        return self._stopped.is_set()

    def stop(self) -> None:
        """Defer every waiting ask now, and every later one."""
        self._stopped.set()

    async def decide(self, request: ApprovalRequest) -> Decision:
        """Announce the ask, then wait: a deferral after the timeout or a stop."""
        if self.stopped:
            return Decision.defer()
        if self.announce is not None:
            self.announce(request)
        self.waiting += 1
        try:
            await asyncio.wait_for(self._stopped.wait(), self.timeout_s)
        except TimeoutError:
            pass
        finally:
            self.waiting -= 1
        return Decision.defer()


class StdinApprover:
    """Asks on the terminal: `y` approves, anything else denies."""

    async def decide(self, request: ApprovalRequest) -> Decision:
        """Prompt on stderr, read a line from stdin."""
        prompt = f"allow {request.act.value} {request.target}? [y/N] "
        if request.act is Act.WRITE and (protected := host_executed(request.target)):
            prompt = (
                f"WARNING: {request.target} is run by the host outside the sandbox: "
                f"{protected[1]}.\n{prompt}"
            )
        answer = await asyncio.to_thread(_ask, prompt)
        if answer.strip().lower() in ("y", "yes"):
            return Decision.approve()
        return Decision.deny("denied at the terminal")


def _ask(prompt: str) -> str:
    sys.stderr.write(prompt)
    sys.stderr.flush()
    return sys.stdin.readline()

"""The decision gate: every act is checked against the policy; an `ask` is persisted, then decided.

("Gate" alone means the verification gate, `gatework.py`; this module is the policy decision.)

Deny-first always: a denied act never reaches the approver, and neither a rewrite nor a remembered
rule can cross a deny (both are re-checked against the full policy before anything happens).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from ioh_tui.config.remembered import save_rules
from ioh_tui.core.acts import Act, Effect
from ioh_tui.core.errors import ConfigError
from ioh_tui.core.events import ApprovalRequested, ApprovalResolved, Event
from ioh_tui.engine.cancel import CancelToken
from ioh_tui.engine.ids import Who
from ioh_tui.policy import (
    ApprovalRequest,
    Approver,
    Decision,
    Layer,
    Policy,
    Rule,
    Verdict,
    append_rules_to_file,
)
from ioh_tui.store import ApprovalRow, Store
from ioh_tui.tools.base import Answer, Deferral, Permit, Refusal
from ioh_tui.tools.workspace import Workspace

POLL_S = 0.2
"""How often a waiting decision looks for an answer written by another process."""


@dataclass(slots=True)
class Preset:
    """A decision taken before the call is re-dispatched (resuming a deferred request)."""

    act: Act
    target: str
    decision: Decision
    request_id: int
    by: str


@dataclass(frozen=True, slots=True)
class HookWord:
    """What the call's `pre_tool` hooks said (a deny never gets here: the call is refused first).

    `ask` asks even where the policy allows; `allow` answers the policy's ask without a person;
    neither moves a policy deny.
    """

    effect: Effect
    """`Effect.ALLOW` or `Effect.ASK`."""
    label: str
    """The hook that said it (`pre_tool#0 (command)`)."""
    reason: str = ""


@dataclass(slots=True)
class DecisionRules:
    """The run-wide part of the decisions: the policy and the rules remembered so far."""

    policy: Policy
    remembered: list[Rule] = field(default_factory=list)

    def effective(self) -> Policy:
        """The policy with the `remembered` layer on top (deny-first, so it cannot beat a deny)."""
        if not self.remembered:
            return self.policy
        return self.policy.with_layer(Layer("remembered", tuple(self.remembered)))


class DecisionGate:
    """The tools' `Decider` during one tool call of one step."""

    def __init__(
        self,
        *,
        rules: DecisionRules,
        workspace: Workspace,
        approver: Approver,
        store: Store,
        emit: Callable[[Event], None],
        cancel: CancelToken,
        base: ApprovalRequest,
        who: Who,
        call_id: str,
        preset: Preset | None = None,
        hook: HookWord | None = None,
    ) -> None:
        self._rules = rules
        self._workspace = workspace
        self._approver = approver
        self._store = store
        self._emit = emit
        self._cancel = cancel
        self._base = base
        self._who = who
        self._call_id = call_id
        self._preset = preset
        self._hook = hook

    def verdict(self, act: Act, target: str, also: tuple[str, ...] = ()) -> Verdict:
        """The strictest verdict over the target, `also`, and a path's symlink-resolved form."""
        policy = self._rules.effective()
        targets = [target, *also]
        if act in (Act.READ, Act.WRITE):
            targets += self._canonical(target)
        verdicts = [policy.explain(act, t) for t in targets]
        return max(verdicts, key=lambda v: v.effect.rank)

    def _canonical(self, rel: str) -> list[str]:
        try:
            real = (self._workspace.root / rel).resolve()
            canonical = real.relative_to(self._workspace.root).as_posix()
        except (OSError, ValueError):
            return []
        return [canonical] if canonical not in (rel, ".") else []

    async def __call__(
        self,
        act: Act,
        target: str,
        *,
        content: str | None = None,
        preview: str | None = None,
        also: tuple[str, ...] = (),
    ) -> Answer:
        """Decide one act (see module docstring)."""
        verdict = self.verdict(act, target, also)
        if verdict.effect is Effect.DENY:
            return await self._refuse(
                act, target, verdict, "the policy forbids it; find another way"
            )
        preset = self._preset
        presetting = preset is not None and (preset.act, preset.target) == (act, target)
        hook = None if presetting else self._hook
        if hook is not None and verdict.effect is not hook.effect:
            if hook.effect is Effect.ALLOW:
                # The hook answers the policy's ask; recorded as the hook's decision.
                asked = replace(
                    self._base, act=act, target=target, rule=verdict.rule, layer=verdict.layer
                )
                await self._record(asked, "approve", f"hook {hook.label}")
                return Permit(target, content)
            # The hook asks where the policy allows: asked as the hook's ask.
            verdict = Verdict(Effect.ASK, f"{hook.label}: {hook.reason}"[:200], "hooks")
        if verdict.effect is Effect.ALLOW and not presetting:
            return Permit(target, content)
        request = ApprovalRequest(
            act=act,
            target=target,
            content=content,
            preview=preview,
            rule=verdict.rule,
            layer=verdict.layer,
            source=verdict.source,
            workspace=self._workspace.root,
            run_id=self._base.run_id,
            agent_id=self._base.agent_id,
            agent_label=self._base.agent_label,
            step=self._base.step,
            goal=self._base.goal,
            tool=self._base.tool,
        )
        if preset is not None and presetting:
            # A deferred (or interrupted) act gets exactly the operator's decision.
            request = replace(request, request_id=preset.request_id)
            return await self._settle(request, preset.decision, preset.by)
        request_id = await self._store.create_approval(
            request.run_id,
            request.step,
            {
                "call_id": self._call_id,
                "tool": request.tool,
                "act": act.value,
                "target": target,
                "content": content,
                "preview": preview,
                "rule": verdict.rule,
                "layer": verdict.layer,
                "agent_label": request.agent_label,
            },
        )
        request = replace(request, request_id=request_id)
        self._emit(
            ApprovalRequested(
                **self._who.fields(),
                request_id=request_id,
                act=act.value,
                target=target,
                rule=verdict.rule,
                layer=verdict.layer,
                step=request.step,
                content=content,
                preview=preview,
            )
        )
        decision, by = await self._cancel.guard(self._ask(request))
        return await self._settle(request, decision, by)

    async def _ask(self, request: ApprovalRequest) -> tuple[Decision, str]:
        """Race the approver against an answer written into the store by another process."""
        asked = asyncio.ensure_future(self._approver.decide(request))
        try:
            while True:
                done, _ = await asyncio.wait({asked}, timeout=POLL_S)
                if done:
                    return asked.result(), "approver"
                row = await self._store.approval(request.request_id)
                if row is None:
                    continue
                if row.forged:
                    # Written into the store without the key: no answer. The ask stays pending.
                    await self._store.refuse_forged(row.id)
                elif (stored := _stored_answer(row)) is not None:
                    asked.cancel()
                    return stored
        finally:
            if not asked.done():
                asked.cancel()

    async def _settle(self, request: ApprovalRequest, decision: Decision, by: str) -> Answer:
        if decision.kind == "defer":
            await self._record(request, "defer", by)
            self._resolved(request, decision, by)
            return Deferral(request.request_id)
        performed = decision.applied_to(request)
        answer = decision.to_row(request)
        while not await self._store.answer_approval(request.request_id, answer, by=by):
            # Another (sealed) answer landed first; a forged one would have been replaced.
            row = await self._store.approval(request.request_id)
            if row is None:
                break  # the request's row is gone: this answer stands
            if (stored := _stored_answer(row)) is not None:
                decision, by = stored
                performed = decision.applied_to(request)
                break
        await self._record(request, decision.kind, by)
        self._resolved(request, decision, by)
        if decision.kind == "deny":
            # The file of the rule that asked, so the model (and the trace) know where it stands.
            asked = (
                f" (asked by rule {request.rule!r} of {request.source})" if request.source else ""
            )
            return Refusal(
                f"[{request.act.value} denied] {request.target} — {decision.reason}{asked}",
                denied_by_person=True,
            )
        return await self._approved(request, performed, decision)

    async def _approved(
        self, request: ApprovalRequest, performed: ApprovalRequest, decision: Decision
    ) -> Answer:
        if decision.modified:
            also = (
                (performed.target.split()[0],)
                if request.act is Act.EXEC and performed.target
                else ()
            )
            recheck = self.verdict(request.act, performed.target, also)
            if recheck.effect is Effect.DENY:
                return await self._refuse(
                    request.act,
                    performed.target,
                    recheck,
                    "an approved rewrite may not cross a deny",
                )
        if decision.remember:
            self._rules.remembered.extend(decision.remember)
        note = ""
        if decision.modified:
            note = (
                "(the operator rewrote this action before approving it: "
                f"{request.act.value} {performed.target})"
            )
        if not_saved := self._save(decision):
            note = f"{note} {not_saved}".strip()
        return Permit(performed.target, performed.content, note)

    def _save(self, decision: Decision) -> str:
        """Save remembered rules that outlast the run; what went wrong, if anything."""
        return save_remembered(decision, self._workspace.root)

    async def _refuse(self, act: Act, target: str, verdict: Verdict, why: str) -> Refusal:
        await self._store.add_policy_event(
            self._base.run_id,
            self._base.step,
            kind="refusal",
            act=act.value,
            target=target,
            rule=verdict.rule,
            layer=verdict.layer,
            source="policy",
        )
        return Refusal(f"[{act.value} refused] {target} ({verdict.origin()}): {why}")

    async def _record(self, request: ApprovalRequest, decision: str, by: str) -> None:
        await self._store.add_policy_event(
            request.run_id,
            request.step,
            kind="decision",
            act=request.act.value,
            target=request.target,
            rule=request.rule,
            layer=request.layer,
            decision=decision,
            source=by,
        )

    def _resolved(self, request: ApprovalRequest, decision: Decision, by: str) -> None:
        self._emit(
            ApprovalResolved(
                **self._who.fields(),
                request_id=request.request_id,
                decision=decision.kind,
                modified=decision.modified,
                remembered=[r.describe() for r in decision.remember],
                reason=decision.reason or None,
                by=by,
            )
        )


def save_remembered(decision: Decision, workspace: Path) -> str:
    """Save the rules `decision` remembers beyond the run (its scope's file); what went wrong.

    The run's own gate calls it for an answer it was given; whoever answers a run another
    process drives calls it too (that run reads only the rules from the sealed answer, which
    carries no scope, and keeps them for itself). Empty when nothing was to be saved or all went
    well; a rule kept for the run alone is not saved.
    """
    if not decision.remember:
        return ""
    try:
        if decision.scope in ("project", "user"):
            save_rules(decision.scope, decision.remember, workspace)
        elif decision.scope == "file" and decision.remember_file is not None:
            append_rules_to_file(
                Path(decision.remember_file), "remembered", list(decision.remember)
            )
    except ConfigError as exc:
        # The approval stands (and the rule holds for this run); only the saving failed.
        return f"(the remembered rule holds for this run only: {exc})"
    return ""


def _stored_answer(row: ApprovalRow) -> tuple[Decision, str] | None:
    """The sealed answer on a request's row, and who gave it; None while it has none.

    The store reads a forged answer as none (`ApprovalRow.forged`). A request closed unanswered
    (abandoned by a resume that took the run over, expired when the run ended) is refused.
    """
    if row.status in ("abandoned", "expired"):
        return Decision.deny(row.reason or f"the request was {row.status}"), row.decided_by or ""
    if row.status not in ("approve", "deny"):
        return None
    return Decision.from_row(row.answer), row.decided_by or "attached"


def request_from_row(row: ApprovalRow, goal: str = "") -> ApprovalRequest:
    """A stored request as it was first asked (a resumed run asks it again; the app shows it).

    The row carries its run's goal (`Store.approvals`); `goal` stands in when it does not.
    """
    return ApprovalRequest(
        act=row.act,
        target=row.target,
        content=row.content,
        preview=row.preview,
        rule=row.rule,
        layer=row.layer,
        request_id=row.id,
        run_id=row.run_id,
        agent_label=row.agent_label or "root",
        step=row.step,
        goal=row.goal or goal,
        tool=row.tool,
    )

"""Every ask as a `session/request_permission`, and the chosen option as our five answers.

ACP v1 has four option kinds (allow_once, allow_always, reject_once, reject_always); our five
answers are five options, each with the kind nearest in effect, so a client with shortcuts per
kind still shows them all by name: approve (allow_once); remember (allow_always: a rule for the
rest of the run and the session's later runs); deny (reject_once); defer (reject_once: the run
pauses on the request); rewrite (allow_once, the edited action in `_meta`: `REWRITE_META`). The
chosen option becomes exactly the `Decision` the app's modal returns for that key.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from acp.interfaces import Client
from acp.schema import (
    AllowedOutcome,
    PermissionOption,
    RequestPermissionResponse,
    ToolCallUpdate,
)

from ioh_tui.acp.updates import Translator, tool_kind
from ioh_tui.core.acts import Act, Effect
from ioh_tui.policy import ApprovalRequest, Decision, Rule

REWRITE_META = "ioh-tui.rewrite"
"""The `_meta` key of a selected `rewrite` option carrying the edited action: the new content of
a write or edit, or the new target (a command line, a path) of any other act."""

DENIED = "denied by the operator"
"""The reason the model reads after a deny (the app's modal says the same without a reason)."""


def options(request: ApprovalRequest, *, rewrite: bool = True) -> list[PermissionOption]:
    """The five answers to `request` as permission options (rewrite left out when asked)."""
    shown = [
        PermissionOption(option_id="approve", name="Approve", kind="allow_once"),
        PermissionOption(
            option_id="remember",
            name=f"Remember: allow {request.act.value} {request.target} in this session",
            kind="allow_always",
        ),
        PermissionOption(option_id="deny", name="Deny", kind="reject_once"),
        PermissionOption(
            option_id="defer",
            name="Defer: pause the run; answer later (ioh-tui approvals)",
            kind="reject_once",
        ),
    ]
    if rewrite:
        shown.append(
            PermissionOption(
                option_id="rewrite",
                name="Rewrite: approve an edited action (the client sends it in _meta)",
                kind="allow_once",
            )
        )
    return shown


def decision_for(
    request: ApprovalRequest, option_id: str, meta: dict[str, Any] | None
) -> Decision | None:
    """The `Decision` an option stands for; None for a rewrite that carries no edited action."""
    if option_id == "approve":
        return Decision.approve()
    if option_id == "remember":
        return Decision.remembering(Rule(request.act, Effect.ALLOW, request.target), scope="run")
    if option_id == "defer":
        return Decision.defer()
    if option_id == "rewrite":
        edited = (meta or {}).get(REWRITE_META)
        if not isinstance(edited, str):
            return None
        if request.content is not None:
            return Decision.rewrite(content=edited)
        return Decision.rewrite(target=edited.strip())
    return Decision.deny(DENIED)


def _selected(response: RequestPermissionResponse) -> tuple[str | None, dict[str, Any] | None]:
    outcome = response.outcome
    if isinstance(outcome, AllowedOutcome):
        return outcome.option_id, outcome.field_meta or response.field_meta
    return None, None


class PermissionApprover:
    """An `Approver` that asks the ACP client (`session/request_permission`)."""

    def __init__(
        self,
        client: Client,
        session_id: str,
        translator: Translator,
        flush: Callable[[], Awaitable[None]],
        kept: list[Rule],
    ) -> None:
        """Ask `client` in `session_id`; `flush` sends the updates queued before the ask.

        Rules the client says to remember are added to `kept` too (the session's later runs
        start with them).
        """
        self._client = client
        self._session_id = session_id
        self._translator = translator
        self._flush = flush
        self._kept = kept

    async def decide(self, request: ApprovalRequest) -> Decision:
        """Ask the client; a rewrite without an edited action is asked again without it."""
        await self._flush()  # the tool call goes out before the question about it
        rewrite = True
        while True:
            response = await self._client.request_permission(
                session_id=self._session_id,
                tool_call=self._tool_call(request),
                options=options(request, rewrite=rewrite),
            )
            option_id, meta = _selected(response)
            if option_id is None:
                # The client withdrew the question (its turn was cancelled): nothing is allowed.
                return Decision.deny("the ACP client cancelled the question")
            decision = decision_for(request, option_id, meta)
            if decision is not None:
                self._kept.extend(decision.remember)
                return decision
            rewrite = False

    def _tool_call(self, request: ApprovalRequest) -> ToolCallUpdate:
        agent = request.agent_id if request.agent_id is not None else request.run_id
        acp_id = self._translator.open_calls.get(agent, f"ask-{request.request_id}")
        asked = f"asked by rule {request.rule}" if request.rule else "asked by the default tier"
        if request.layer:
            asked += f" (layer {request.layer})"
        meta = {
            "ioh-tui": {
                "requestId": request.request_id,
                "runId": request.run_id,
                "act": request.act.value,
                "target": request.target,
                "rule": request.rule,
                "layer": request.layer,
                "agent": request.agent_label,
            }
        }
        diff = self._translator.diffs.get(acp_id)
        title = f"{request.act.value} {request.target} — {asked}"
        kind = self._translator.kinds.get(acp_id) or tool_kind(request.tool)
        if request.act is Act.WRITE and request.content is not None and diff is None:
            from acp import tool_diff_content

            diff = tool_diff_content(request.target, request.content)
        return ToolCallUpdate(
            tool_call_id=acp_id,
            title=title,
            kind=kind,
            status="pending",
            content=[diff] if diff is not None else None,
            field_meta=meta,
        )

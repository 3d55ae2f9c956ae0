"""A tool context over a real workspace whose decider permits everything (or what a policy says)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ioh_tui.core.acts import Act, Effect
from ioh_tui.policy import Policy
from ioh_tui.sandbox.floor import FloorSandbox
from ioh_tui.tools import Permit, Refusal, ToolContext, Workspace


class PolicyDecider:
    """Decides as `policy` says, with an `ask` answered by `approve` (and every ask recorded)."""

    def __init__(self, policy: Policy, *, approve: bool = True) -> None:
        self.policy = policy
        self.approve = approve
        self.asked: list[tuple[Act, str]] = []

    async def __call__(self, act: Act, target: str, **kw: Any) -> Permit | Refusal:
        targets = (target, *kw.get("also", ()))
        effect = max((self.policy.check(act, t) for t in targets), key=lambda e: e.rank)
        if effect is Effect.DENY:
            return Refusal(f"[{act.value} refused] {target}")
        if effect is Effect.ASK:
            self.asked.append((act, target))
            if not self.approve:
                return Refusal(f"[{act.value} denied] {target}", denied_by_person=True)
        return Permit(target, kw.get("content"))


def context(root: Path, policy: Policy | None = None, **kw: Any) -> ToolContext:
    """A context on `root`; `policy` (default: permissive) decides, and shows what it allows."""
    decider = PolicyDecider(policy or Policy.permissive())
    effective = decider.policy
    return ToolContext(
        Workspace.at(root),
        decider,
        lambda rel: effective.check(Act.READ, rel) is not Effect.DENY,
        FloorSandbox(),
        readable=lambda rel: effective.check(Act.READ, rel) is Effect.ALLOW,
        **kw,
    )

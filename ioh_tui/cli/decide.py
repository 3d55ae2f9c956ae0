"""`resume --decide`: the answer a command line gives a run's pending decision.

`approve` and `deny` (interface.md §2) need nothing more. `rewrite` and `remember` are built
from the pending request itself (its act, target and content), so they are made once the store
is open: `rewrite --to TEXT` approves the request with TEXT as the new content of a write or edit
(or an MCP call's arguments), else as its new target (a command line); `remember` approves it and
keeps `ACT allow PATTERN` (`--pattern`, default the exact target) for `--scope`.
"""

from __future__ import annotations

import argparse

from ioh_tui.core.acts import Act, Effect
from ioh_tui.core.errors import ConfigError, ResumeError
from ioh_tui.policy import Decision, Rule
from ioh_tui.store import ApprovalRow


def why_asked(rule: str | None, layer: str | None) -> str:
    """Why a decision is asked, as the command line says it after the act (or nothing)."""
    from ioh_tui.engine.recovery import RECOVERY_LAYER

    if layer == RECOVERY_LAYER:
        return " (cut by a crash, it may have run in part: it runs again only if approved)"
    return f" (rule {rule}, layer {layer})" if rule else ""


def check_decide(args: argparse.Namespace) -> None:
    """Each option only with its answer, and a rewrite with its text.

    Raises:
        ConfigError: An option without its answer, or `rewrite` without `--to`.
    """
    if args.decide == "rewrite" and args.to is None:
        raise ConfigError("--decide rewrite needs --to TEXT (the rewritten content or target)")
    if args.to is not None and args.decide != "rewrite":
        raise ConfigError("--to goes with --decide rewrite")
    for option in ("pattern", "scope"):
        if getattr(args, option) is not None and args.decide != "remember":
            raise ConfigError(f"--{option} goes with --decide remember")


def needs_request(args: argparse.Namespace) -> bool:
    """Whether the answer is made from the pending request (rewrite, remember)."""
    return args.decide in ("rewrite", "remember")


def decision_of(args: argparse.Namespace, row: ApprovalRow | None) -> Decision | None:
    """The decision `--decide` gives (None without it); `row` is the pending request.

    Raises:
        ResumeError: A rewrite or remember, and no request is pending.
    """
    if args.decide is None:
        return None
    if args.decide == "approve":
        return Decision.approve()
    if args.decide == "deny":
        return Decision.deny(args.reason or "denied by the operator")
    if row is None:
        raise ResumeError(f"run {args.run_id} has no pending decision to answer")
    if args.decide == "rewrite":
        # As the app's modal rewrites: the content of a write (or MCP call), else the target.
        if row.act in (Act.WRITE, Act.MCP) and row.content is not None:
            return Decision.rewrite(content=args.to)
        return Decision.rewrite(target=args.to.strip())
    rule = Rule(row.act, Effect.ALLOW, args.pattern or row.target)
    return Decision.remembering(rule, scope=args.scope or "run")

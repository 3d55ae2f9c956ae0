"""`ioh-tui demo --headless`: the demo without the app; every ask is approved and reported."""

from __future__ import annotations

import argparse
import asyncio

from ioh_tui.cli.headless import json_observer, progress_observer
from ioh_tui.cli.options import store_path
from ioh_tui.cli.terminal import say, say_json
from ioh_tui.demo import demo_parts
from ioh_tui.engine import NewRun, Parts, RunResult, start
from ioh_tui.engine.bus import Observer
from ioh_tui.policy import ApprovalRequest, Decision
from ioh_tui.store import Store


class ReportingApprover:
    """Approves every ask and says so on stderr."""

    async def decide(self, request: ApprovalRequest) -> Decision:
        """Approve, and report it."""
        say(f"approved automatically: {request.act.value} {request.target}", err=True)
        return Decision.approve()


def demo_headless(args: argparse.Namespace) -> int:
    """Run the demo headless; exit status as for `exec`."""

    async def main() -> RunResult:
        async with demo_parts() as parts, Store.open(store_path(args)) as store:
            say(
                f"demo: {parts.label} over the OpenAI wire on loopback; "
                f"workspace {parts.workspace}",
                err=True,
            )
            observers: list[Observer] = (
                [json_observer(say_json)] if args.json else [progress_observer()]
            )
            request = NewRun(parts.contract, parts.containment, parts.driver)
            return await start(
                request,
                Parts(
                    parts.provider,
                    store,
                    policy=parts.policy,
                    approver=ReportingApprover(),
                    sandbox=parts.sandbox,
                    observers=tuple(observers),
                ),
            )

    result = asyncio.run(main())
    if not args.json:
        say(
            f"run {result.run_id} {result.outcome} after {result.steps} steps, "
            f"{result.tokens:,} tokens"
        )
    return result.exit_status

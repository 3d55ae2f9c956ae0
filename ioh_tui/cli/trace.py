"""Reading the store: `runs`, `show RUN_ID`, `approvals` (human tables or JSON)."""

from __future__ import annotations

import argparse
import asyncio
import json
from contextlib import AbstractAsyncContextManager
from dataclasses import asdict
from typing import Any

from ioh_tui.cli.options import store_path
from ioh_tui.cli.terminal import say, say_json
from ioh_tui.core.outcomes import run_state
from ioh_tui.store import ApprovalRow, Store


def _open(args: argparse.Namespace) -> AbstractAsyncContextManager[Store]:
    # Reading never makes a store: a wrong or empty path is reported, not initialised.
    return Store.open(store_path(args), create=False)


def runs_command(args: argparse.Namespace) -> int:
    """List runs: id, goal, outcome/status, steps, tokens, started.

    The table's state (and `state` in JSON) is `crashed` for a run left running by a process
    that died, as the app says: the stored status stays `running` until it is resumed.
    """

    async def go() -> list[dict[str, Any]]:
        async with _open(args) as store:
            rows = await store.runs(limit=500)
            driven = await store.driven_runs()
        return [
            {
                "run_id": r.id,
                "goal": r.goal,
                "status": r.status,
                "outcome": r.outcome,
                "state": run_state(r, driven),
                "steps": r.steps,
                "tokens": r.tokens,
                "started": r.started_at,
                "parent_id": r.parent_run_id,
            }
            for r in rows
        ]

    rows = asyncio.run(go())
    if args.json:
        for row in rows:
            say_json(json.dumps(row))
        return 0
    say(f"{'RUN':>5}  {'OUTCOME':<22} {'STEPS':>5} {'TOKENS':>9}  {'STARTED':<24} GOAL")
    for row in rows:
        say(
            f"{row['run_id']:>5}  {row['state']:<22} {row['steps']:>5} {row['tokens']:>9,}  "
            f"{row['started']:<24} {row['goal'][:60]}"
        )
    return 0


def show_command(args: argparse.Namespace) -> int:
    """The trace of one run."""

    async def go() -> dict[str, Any]:
        async with _open(args) as store:
            run = await store.run(args.run_id)
            driven = await store.driven_runs()
            return {
                "run": {**asdict(run), "state": run_state(run, driven)},
                "steps": [asdict(s) for s in await store.steps(args.run_id)],
                "tool_calls": [asdict(c) for c in await store.tool_calls(args.run_id)],
                "approvals": [_stored_form(a) for a in await store.approvals(args.run_id)],
                "policy_events": [asdict(e) for e in await store.policy_events(args.run_id)],
                "provider_calls": [asdict(p) for p in await store.provider_calls(args.run_id)],
                "verification": [asdict(g) for g in await store.gate_attempts(args.run_id)],
                "sandbox_events": [asdict(e) for e in await store.sandbox_events(args.run_id)],
                "sub_agents": [
                    {**asdict(c), "state": run_state(c, driven)}
                    for c in await store.children(args.run_id)
                ],
            }

    trace = asyncio.run(go())
    if args.json:
        say_json(json.dumps(trace, default=str))
        return 0
    _print_trace(trace)
    return 0


def _print_trace(trace: dict[str, Any]) -> None:
    run = trace["run"]
    say(f"run {run['id']}: {run['goal']}")
    say(
        f"  {run['mode']} in {run['root']}  provider {run['provider']} {run['model'] or ''}  "
        f"sandbox {run['sandbox']}"
    )
    say(
        f"  {run['state']} after {run['steps']} steps, "
        f"{run['tokens']:,} tokens  "
        f"({run['started_at']})"
    )
    if run["detail"]:
        say(f"  {run['detail']}")
    contract = run["contract"] if isinstance(run.get("contract"), dict) else {}
    carried = contract.get("continues")
    if carried:
        # `--continue` or a later ACP prompt: the model read these runs' turns first.
        say(f"  carries on the conversation of run(s) {', '.join(str(r) for r in carried)}")
    effort = (contract.get("driver") or {}).get("reasoning_effort")
    if effort:
        say(f"  reasoning effort {effort}")
    caps = contract.get("gate")
    if caps:
        say(
            f"  gate caps: {caps.get('timeout_s')} s wall clock, {caps.get('cpu_s')} s CPU, "
            f"{caps.get('memory_mb')} MB memory"
        )
    calls_by_step: dict[int, list[dict[str, Any]]] = {}
    for call in trace["tool_calls"]:
        calls_by_step.setdefault(call["step"], []).append(call)
    gates = {g["step"]: g for g in trace["verification"]}
    for step in trace["steps"]:
        n = step["step"]
        say(f"step {n}  ({step['tokens']:,} tokens)")
        for call in calls_by_step.get(n, []):
            mark = "REFUSED" if call["refused"] else ("ok" if call["ok"] else "failed")
            say(
                f"  {call['name']} {json.dumps(call['arguments'])[:80]}  "
                f"-> {mark}: {call['summary']}"
            )
        if n in gates:
            say(f"  gate {gates[n]['status']}: {_first_line(gates[n]['detail'])}")
    _print_sandbox(trace["sandbox_events"])
    for a in trace["approvals"]:
        who = f" by {a['decided_by']}" if a["decided_by"] else ""
        say(
            f"approval {a['id']} (step {a['step']}): {a['act']} {a['target']} -> {a['status']}{who}"
        )
    attempts = trace["provider_calls"]
    if attempts:
        failed = sum(1 for p in attempts if p["failure"])
        say(f"model calls: {len(attempts)} attempts ({failed} failed)")
    for child in trace["sub_agents"]:
        say(f"sub-agent {child['id']}: {child['goal']} -> {child['state']}")


def _print_sandbox(rows: list[dict[str, Any]]) -> None:
    """Commands (the agent's `exec`, the gate's `gate_exec`), caps hit, the gate work dir."""
    if rows:
        say("sandbox:")
    for row in rows:
        # One line per row: an argv may hold newlines (a `-c` script); --json has it whole.
        detail = row["detail"].replace("\n", "\\n")
        detail = detail if len(detail) <= 200 else detail[:199] + "…"
        say(f"  step {row['step']}  {row['kind']:<15} [{row['backend']}] {detail}")


def approvals_command(args: argparse.Namespace) -> int:
    """Pending (deferred) decisions across runs."""

    async def go() -> list[ApprovalRow]:
        async with _open(args) as store:
            return await store.approvals(pending_only=True)

    rows = asyncio.run(go())
    if args.json:
        for a in rows:
            say_json(
                json.dumps(
                    {
                        "run_id": a.run_id,
                        "request_id": a.id,
                        "act": a.act,
                        "target": a.target,
                        "agent": a.agent_label,
                        "goal": a.goal,
                        "rule": a.rule,
                        "layer": a.layer,
                    }
                )
            )
        return 0
    if not rows:
        say("no pending decisions")
        return 0
    from ioh_tui.cli.decide import why_asked

    for a in rows:
        why = why_asked(a.rule, a.layer)
        say(
            f"run {a.run_id} request {a.id} [{a.agent_label}]: {a.act} {a.target}{why}  "
            f"({a.goal[:50]})"
        )
    return 0


def _stored_form(row: ApprovalRow) -> dict[str, Any]:
    """An approvals row as the table holds it: `remembered` is a JSON list in a text column."""
    return {**asdict(row), "remembered": json.dumps(list(row.remembered))}


def _first_line(text: str) -> str:
    return text.splitlines()[0] if text else ""

"""exec: run an argv (no shell) in the workspace, through the sandbox, under a wall-clock limit."""

from __future__ import annotations

import dataclasses
import math
import shlex
from collections.abc import Mapping
from typing import Any

from ioh_tui.core.acts import Act, Effect
from ioh_tui.sandbox.base import EXEC_LIMITS, QUIET_ENV, ExecResult
from ioh_tui.tools.base import (
    ArgumentError,
    Asked,
    Deferral,
    Refusal,
    ToolContext,
    ToolResult,
    cap,
    check_text,
)


def parse_argv(args: Mapping[str, Any]) -> list[str]:
    """The `argv` argument as a non-empty list of strings."""
    argv = args.get("argv")
    if not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv):
        raise ArgumentError("argv must be a non-empty list of strings (program first; no shell)")
    if not argv[0]:
        raise ArgumentError("argv[0] must name a program")
    for i, word in enumerate(argv):
        check_text(f"argv[{i}]", word)
    return list(argv)


def exec_asked(args: Mapping[str, Any]) -> Asked:
    """What a command a crash cut asks on resume: the act and line `exec_command` decides."""
    argv = args.get("argv")
    return Asked(Act.EXEC, shlex.join(argv) if isinstance(argv, list) else str(argv))


async def exec_command(args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
    """Run the command; the decider checks the whole command line (its program, what it wraps)."""
    argv = parse_argv(args)
    timeout = args.get("timeout_s")
    if timeout is not None and (
        isinstance(timeout, bool)
        or not isinstance(timeout, int | float)
        or not math.isfinite(timeout)
        or timeout <= 0
    ):
        raise ArgumentError("timeout_s must be a positive number of seconds")
    line = shlex.join(argv)
    # One target: the policy tries its program and any wrapped command itself (policy/argv.py),
    # so an allow of `ruff *` allows `ruff check .` (checked apart, `ruff` alone would ask).
    answer = await ctx.decide(Act.EXEC, line, preview=_network_line(ctx, line))
    if isinstance(answer, Refusal):
        return ToolResult(answer.observation, ok=False, refused=True)
    if isinstance(answer, Deferral):
        return ToolResult("[exec deferred]", ok=False, deferred=answer.request_id)
    if answer.target != line:
        try:
            argv = shlex.split(answer.target)
        except ValueError as exc:
            return ToolResult(
                f"[exec error] the rewritten command cannot be parsed: {exc}", ok=False
            )
    network = await _network(ctx, answer.target)
    if isinstance(network, Deferral):
        return ToolResult("[exec deferred]", ok=False, deferred=network.request_id)
    # Measured after the decision: a person may have taken a while to answer.
    wall = ctx.wall_s(float(timeout) if timeout else None)
    if wall <= 0:
        return ToolResult(f"[exec not run] `{line}`: the run's time budget is spent", ok=False)
    # Every command gets CPU, memory and process caps as well as the wall clock (issue 18).
    limits = dataclasses.replace(EXEC_LIMITS, wall_s=wall)
    result = await ctx.sandbox.run(
        argv,
        ctx.workspace.root,
        limits=limits,
        network=network is not None,
        env=QUIET_ENV,
        on_output=ctx.on_output,
    )
    note = f"\n{answer.note}" if answer.note else ""
    if network is not None:
        note += f"\n[network granted: {network}]"
    return ToolResult(
        render_exec(result, ctx.entry_cap) + note,
        ok=result.ok,
        changed=True,
        meta={"exit_code": result.exit_code, "network": network},
        ran=result,
    )


def _network_line(ctx: ToolContext, line: str) -> str | None:
    """What the approval shows about the network this command would get (None: none)."""
    verdict = ctx.net(line) if ctx.net is not None else None
    if verdict is None or verdict.effect is Effect.DENY:
        return None
    if verdict.effect is Effect.ASK:
        return f"network: asked next (net rule `{verdict.rule}`, {verdict.layer} layer)"
    return f"network: granted by net rule `{verdict.rule}` ({verdict.layer} layer)"


async def _network(ctx: ToolContext, line: str) -> str | Deferral | None:
    """The network for the command that will run: the granting rule, a deferral, or None.

    Only a `net` rule that names the command grants it (the default denies without asking);
    the grant goes through the decider so it is recorded, and a `net ask` rule asks a person.
    """
    verdict = ctx.net(line) if ctx.net is not None else None
    if verdict is None or verdict.effect is Effect.DENY:
        return None
    answer = await ctx.decide(Act.NET, line)
    if isinstance(answer, Deferral):
        return answer
    if isinstance(answer, Refusal):
        return None
    return f"net rule `{verdict.rule}` ({verdict.layer} layer)"


def render_exec(result: ExecResult, limit: int) -> str:
    """The observation for a finished command: how it ended, then its capped output."""
    line = shlex.join(result.argv)
    if result.unavailable:
        return f"[exec unavailable] `{line}`: program not found"
    if result.cap_hit == "wall":
        head = f"[exec timed out] `{line}` was killed at its wall-clock limit"
    elif result.cap_hit is not None:
        head = f"[exec `{line}` killed] it hit its {result.cap_hit} cap"
    elif result.exit_code is None:
        head = f"[exec `{line}` killed] by signal {result.signal}"
    else:
        head = f"[exec `{line}` exit {result.exit_code}]"
    parts = [head]
    if result.stdout:
        parts.append("stdout:\n" + cap(result.stdout, limit // 2, keep="both"))
    if result.stderr:
        parts.append("stderr:\n" + cap(result.stderr, limit // 2, keep="both"))
    if not result.stdout and not result.stderr:
        parts.append("(no output)")
    return "\n".join(parts)

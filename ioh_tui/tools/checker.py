"""The project's own type-check after each successful edit, appended to the edit's observation.

What this buys is when a type error arrives, not whether: without it a model learns that an edit
broke the build only when it decides to find out, and a plausible-looking function gives it no
reason to. The check covers the whole workspace (no checker can judge one file alone, and a caller
broken by a changed signature is the most valuable finding), so findings may name other files.

Three observations, deliberately unalike:

- findings: `[check] ...` followed by what the checker printed (cargo: only the rendered compiler
  messages, since its JSON stream is the only way to get diagnostics without progress bars);
- clean: one short `[check clean]` line. Silence would look like "nothing checked your work", and
  a model reading silence as approval is the failure this exists to prevent;
- unchecked: `[edit unchecked] <why>` when the checker is missing, timed out, was killed, could not
  be started, or failed without saying anything. An edit is never turned into a failure.

A project with no detected toolchain, or an ecosystem without a cheap checker (maven, gradle,
dotnet, swift, cmake, elixir, ruby, php, make: their only check is a build), is skipped and
nothing is said, as the seed specifies.

The checker runs through the sandbox with no network, the workspace root as its working
directory, the contract's exec timeout as its wall clock and the observation cap as its output
bound. It is not policy-gated (the write that triggered it already was), as in the reference.
"""

from __future__ import annotations

import json
import shlex

from ioh_tui.core.errors import SandboxError
from ioh_tui.sandbox.base import QUIET_ENV, ExecResult, Limits
from ioh_tui.toolchain import OFFLINE_ENV, home_env
from ioh_tui.tools.base import ToolContext, cap

_WRITE_LINE_ROOM = 400
"""Characters of the observation cap left for the write's own line above the findings."""
_REASON_CHARS = 1500
"""How much of a failing checker's error output is kept as the reason it could not check."""


async def check_after_edit(ctx: ToolContext, rel: str) -> str:
    """Run the project's checker after `rel` changed; return the text to append (maybe empty).

    Args:
        ctx: the tool context; `ctx.toolchain` is the run's detection (None: not a project).
        rel: the workspace-relative path that was written (named in the unchecked message).

    Returns:
        "" when skipped, else a block starting with a newline, bounded by `ctx.entry_cap`.
    """
    toolchain = ctx.toolchain
    if toolchain is None or not toolchain.check:
        return ""
    argv = list(toolchain.check)
    line = shlex.join(argv)
    wall = ctx.wall_s()
    if wall <= 0:
        return _unchecked(rel, "the run's time budget is spent")
    try:
        result = await ctx.sandbox.run(
            argv,
            ctx.workspace.root,
            limits=Limits(wall_s=wall),
            network=False,
            env={**QUIET_ENV, **home_env(), **OFFLINE_ENV},
        )
    except SandboxError as exc:
        return _unchecked(rel, f"the sandbox could not start `{line}`: {exc}")
    budget = max(ctx.entry_cap - _WRITE_LINE_ROOM, 500)
    return cap(_render(toolchain.ecosystem, line, rel, result, wall), budget, keep="both")


def _render(ecosystem: str, line: str, rel: str, result: ExecResult, timeout_s: float) -> str:
    if result.unavailable:
        return _unchecked(
            rel, f"`{shlex.split(line)[0]}` is not installed here (not found on PATH)"
        )
    if result.cap_hit == "wall":
        return _unchecked(rel, f"`{line}` did not finish within the {timeout_s:g}s exec timeout")
    if result.cap_hit not in (None, "output"):
        return _unchecked(rel, f"`{line}` was killed at its {result.cap_hit} cap")
    if result.exit_code is None and result.cap_hit is None:
        return _unchecked(rel, f"`{line}` was killed by signal {result.signal}")
    findings = cargo_findings(result.stdout) if ecosystem == "cargo" else _console(result)
    if result.cap_hit == "output" and not findings:
        return _unchecked(rel, f"`{line}` was killed at its output cap before reporting")
    if findings:
        cut = " (cut short at its output cap)" if result.cap_hit == "output" else ""
        return (
            f"\n[check] `{line}` (the project's own checker, over the whole workspace: it may "
            f"name files this edit did not touch) reported{cut}:\n{findings}"
        )
    if result.exit_code == 0:
        return f"\n[check clean] `{line}` reported nothing."
    reason = f"`{line}` exited {result.exit_code}"
    stderr = result.stderr.strip()
    # cargo prints why it could not check (a broken manifest, a dependency not available
    # offline) on stderr; that is the reason, not a finding about the code.
    return _unchecked(
        rel, f"{reason}: {stderr[-_REASON_CHARS:]}" if stderr else f"{reason} with no output"
    )


def _unchecked(rel: str, why: str) -> str:
    return f"\n[edit unchecked] {rel} was written, but nothing checked it: {why}."


def _console(result: ExecResult) -> str:
    """A checker's console output as it printed it (stdout, then stderr)."""
    return "\n".join(part.strip("\n") for part in (result.stdout, result.stderr) if part.strip())


def cargo_findings(stdout: str) -> str:
    """The rendered compiler messages of `cargo check --message-format=json`, nothing else.

    Lines that are not JSON objects (a build script's own output) or do not parse are skipped.
    """
    rendered: list[str] = []
    for raw in stdout.splitlines():
        if not raw.startswith("{"):
            continue
        try:
            item = json.loads(raw)
        except ValueError:
            continue
        if not isinstance(item, dict) or item.get("reason") != "compiler-message":
            continue
        message = item.get("message")
        text = message.get("rendered") if isinstance(message, dict) else None
        if isinstance(text, str) and text.strip():
            rendered.append(text.rstrip("\n"))
    return "\n".join(rendered)

"""Running one hook: in the run's sandbox, in the workspace, with no network, under its timeout.

The sandbox gives a command no stdin, so the JSON object reaches the hook through a one-line
`sh` wrapper that pipes the `IOH_HOOK_INPUT` variable into it: the hook itself reads stdin.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ioh_tui.hooks.protocol import payload_json
from ioh_tui.hooks.spec import Hook
from ioh_tui.sandbox.base import QUIET_ENV, Limits, Sandbox

INPUT_VAR = "IOH_HOOK_INPUT"
_WRAPPER = f'printf "%s" "${INPUT_VAR}" | "$@"'
_OUTPUT_BYTES = 1_000_000
"""An answer is one small object; a hook printing more is killed (its answer is garbage)."""


@dataclass(frozen=True, slots=True)
class HookRun:
    """How one hook run ended: its stdout when it exited 0 in time, else why not."""

    hook: Hook
    stdout: str = ""
    failure: str | None = None
    """Why it decides nothing (exit status, timeout, cap, not found); None: it answered."""
    duration_ms: float = 0.0


async def run_hook(hook: Hook, payload: Mapping[str, Any], sandbox: Sandbox, cwd: Path) -> HookRun:
    """Run `hook` with `payload` on its stdin; the process tree is gone on return."""
    limits = Limits(
        wall_s=hook.timeout_s,
        cpu_s=max(1.0, hook.timeout_s),
        memory_mb=1024,
        output_bytes=_OUTPUT_BYTES,
        max_processes=64,
    )
    env = {**QUIET_ENV, INPUT_VAR: payload_json(payload), "IOH_HOOK_EVENT": hook.event}
    result = await sandbox.run(
        ["sh", "-c", _WRAPPER, "ioh-hook", *hook.command],
        cwd,
        limits=limits,
        network=False,
        env=env,
    )
    failure = None
    if result.unavailable:
        failure = "sh was not found in the sandbox"
    elif result.cap_hit == "wall":
        failure = f"timed out after {hook.timeout_s:g}s and was killed"
    elif result.cap_hit is not None:
        failure = f"killed at its {result.cap_hit} cap"
    elif result.exit_code is None:
        failure = f"killed by signal {result.signal}"
    elif result.exit_code != 0:
        said = result.stderr.strip().splitlines()[-1:] if result.stderr.strip() else []
        failure = f"exited {result.exit_code}" + (f": {said[0][:200]}" if said else "")
    return HookRun(hook, result.stdout if failure is None else "", failure, result.duration_ms)

"""Running the document worker for a tool: decide each act, then do the work in the sandbox.

Shared by the document tools (`tools/documents.py`) and the scan tools (`tools/scans.py`).
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ioh_tui.core.acts import Act
from ioh_tui.documents import EXTRA
from ioh_tui.sandbox.base import EXEC_LIMITS, QUIET_ENV
from ioh_tui.tools.base import ArgumentError, Deferral, Permit, Refusal, ToolContext, ToolResult

WORK_WALL_S = 120.0
"""A worker's wall-clock cap (at most the run's time left)."""


class Stop(Exception):
    """The operation ends with this result (a refusal, a deferral, an error for the model)."""

    def __init__(self, result: ToolResult) -> None:
        super().__init__(result.output)
        self.result = result


def target(ctx: ToolContext, path: str, kinds: tuple[str, ...]) -> str:
    """The workspace-relative form of a document path (symlinks out of the root are refused)."""
    rel, _ = ctx.workspace.resolve(path)
    if Path(rel).suffix.lower() not in kinds:
        raise ArgumentError(f"{path!r} must end in {', '.join(kinds)}")
    return rel


async def readable(ctx: ToolContext, path: str, verb: str, kinds: tuple[str, ...]) -> str:
    """`path` once the policy lets it be read (as named and as its symlinks resolve)."""
    rel = target(ctx, path, kinds)
    real = real_name(ctx, rel)
    also = (real,) if real != rel else ()
    permitted(await ctx.decide(Act.READ, rel, also=also), verb)
    return rel


def real_name(ctx: ToolContext, rel: str) -> str:
    """`rel` with its symlinks resolved (`target` refused any that leave the root)."""
    real = Path(os.path.realpath(ctx.workspace.root / rel))
    return ctx.workspace.relative(real) if real != ctx.workspace.root else ""


async def decide_write(
    ctx: ToolContext, verb: str, rel: str, content: str | None, preview: str
) -> Permit:
    """The `write` of `rel`, decided: the permit (perhaps rewritten), else `Stop`."""
    answer = await ctx.decide(Act.WRITE, rel, content=content, preview=preview)
    return permitted(answer, verb)


def permitted(answer: object, verb: str) -> Permit:
    """The decider's answer as a permit, or `Stop` with the refusal or deferral."""
    if isinstance(answer, Refusal):
        raise Stop(ToolResult(answer.observation, ok=False, refused=True))
    if isinstance(answer, Deferral):
        raise Stop(ToolResult(f"[{verb} deferred]", ok=False, deferred=answer.request_id))
    assert isinstance(answer, Permit)
    return answer


async def work(
    ctx: ToolContext, verb: str, request: Mapping[str, Any], extra: str = EXTRA
) -> dict[str, Any]:
    """Run one request through the worker in the sandbox; its answer, or `Stop`."""
    wall = min(WORK_WALL_S, ctx.wall_s())
    if wall <= 0:
        raise Stop(ToolResult(f"[{verb} not run] the run's time budget is spent", ok=False))
    folder = Path(tempfile.mkdtemp(prefix="ioh-doc-"))
    try:
        (folder / "request.json").write_text(json.dumps(request), encoding="utf-8")
        done = await ctx.sandbox.run(
            [sys.executable, "-I", "-m", "ioh_tui.documents.worker", str(folder / "request.json")],
            ctx.workspace.root,
            limits=dataclasses.replace(EXEC_LIMITS, wall_s=wall, max_processes=8),
            network=False,
            writable=[folder],
            env=QUIET_ENV,
        )
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    if done.cap_hit is not None:
        raise Stop(
            ToolResult(f"[{verb} error] the document worker hit its {done.cap_hit} cap", ok=False)
        )
    try:
        answer = json.loads(done.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        why = done.stderr.strip().splitlines()[-1:] or [f"exit {done.exit_code}"]
        raise Stop(
            ToolResult(f"[{verb} error] the document worker failed: {why[0]}", ok=False)
        ) from None
    if not answer.get("ok"):
        if answer.get("missing"):
            how = answer.get("install") or f"install the optional extra `pip install '{extra}'`"
            raise Stop(
                ToolResult(f"[{verb} error] {answer['missing']} is not installed: {how}", ok=False)
            )
        raise Stop(ToolResult(f"[{verb} error] {answer.get('error')}", ok=False))
    return dict(answer)

"""The run's gate work directory: made for gate commands, traced, gone on every exit path.

Real runs: a scripted model, a real store file, real gate commands in every containing rung.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from ioh_tui.engine import CancelToken, TaskContract, run
from ioh_tui.engine.contract import RunResult
from ioh_tui.policy import Policy
from ioh_tui.sandbox import ExecResult, Limits, OutputSink, Sandbox, probe, select
from ioh_tui.sandbox.base import DEFAULT_LIMITS
from ioh_tui.store import SandboxEventRow, Store
from ioh_tui.verification import Command, CompilesRust, WorkspaceFileContains
from tests.integration.engine.helpers import READ_CALC, scripted

RUNGS = [r for r in probe() if r != "none"]

WRITES_SCRATCH = textwrap.dedent(
    """
    import os, pathlib
    scratch = pathlib.Path(os.environ["TMPDIR"])
    (scratch / "probe.txt").write_text("the gate may write here")
    pathlib.Path("seen_tmpdir").write_text(str(scratch))
    """
)
"""A gate that writes into its TMPDIR (fails if that is not writable) and says where it was."""

HANGS = textwrap.dedent(
    """
    import os, pathlib, time
    pathlib.Path(os.environ["TMPDIR"], "started").write_text("")
    pathlib.Path("started").write_text("")
    time.sleep(60)
    """
)
"""A gate that marks its start (in the scratch and in the workspace), then hangs."""


WALL = Limits(wall_s=20)
"""A backstop: no gate of this file should run that long."""


def _gate(source: str, limits: Limits = WALL) -> Command:
    return Command([sys.executable, "-c", source], limits=limits)


async def _run(
    project: Path,
    store: Store,
    gate: Command | WorkspaceFileContains,
    sandbox: Sandbox,
    *,
    turns: Sequence[dict[str, Any]] = ({"text": "done", "tool_calls": [READ_CALC]},),
    cancel: CancelToken | None = None,
) -> RunResult:
    contract = TaskContract.workspace("check", project, gate).with_max_steps(len(turns))
    return await run(
        contract,
        scripted(*turns),
        store=store,
        policy=Policy.permissive(),
        sandbox=sandbox,
        cancel=cancel,
    )


def _created(rows: list[SandboxEventRow]) -> Path:
    return Path(next(r.detail for r in rows if r.kind == "workdir_created"))


@pytest.fixture(params=RUNGS)
def rung(request: pytest.FixtureRequest) -> str:
    """Every containing rung available here: the scratch must be writable in each."""
    name: str = request.param
    return name


async def test_a_command_gate_gets_a_writable_scratch_that_is_traced_then_removed(
    project: Path, tmp_path: Path, rung: str
) -> None:
    sandbox = select(rung)
    async with Store.open(tmp_path / "trace.db") as store:
        result = await _run(project, store, _gate(WRITES_SCRATCH), sandbox)
        rows = await store.sandbox_events(result.run_id)
    assert result.outcome == "success", result.detail
    assert [r.kind for r in rows] == ["workdir_created", "gate_exec", "workdir_removed"]
    assert {r.backend for r in rows} == {sandbox.backend}
    scratch = _created(rows)
    assert rows[-1].detail == str(scratch) and scratch.name.startswith("ioh-gate-")
    # The command saw the scratch as its TMPDIR, wrote there, and the directory is gone.
    assert (project / "seen_tmpdir").read_text() == str(scratch)
    assert not scratch.exists()
    assert rows[1].detail.startswith(sys.executable) and "-c" in rows[1].detail


async def test_a_gate_command_killed_at_a_cap_is_traced_and_the_scratch_removed(
    project: Path, tmp_path: Path
) -> None:
    gate = _gate(HANGS, Limits(wall_s=0.3))
    async with Store.open(tmp_path / "trace.db") as store:
        result = await _run(project, store, gate, select("floor"))
        rows = await store.sandbox_events(result.run_id)
    assert result.outcome == "step_cap_reached"
    kinds = [(r.kind, r.detail) for r in rows]
    assert kinds[1][0] == "gate_exec" and kinds[2] == ("cap_hit", "wall")
    assert [k for k, _ in kinds] == ["workdir_created", "gate_exec", "cap_hit", "workdir_removed"]
    assert all(r.backend == "portable-floor" for r in rows)
    assert not _created(rows).exists()


async def test_one_scratch_serves_every_gate_of_the_run(project: Path, tmp_path: Path) -> None:
    # Each step edits calc.py, so the (always failing) gate runs after each of the three.
    flips = [("a - b", "a * b"), ("a * b", "a - b"), ("a - b", "a * b")]
    turns = [
        {
            "tool_calls": [
                {
                    "name": "edit_file",
                    "arguments": {"path": "calc.py", "old_text": old, "new_text": new},
                }
            ]
        }
        for old, new in flips
    ]
    gate = Command([sys.executable, "-c", "raise SystemExit(1)"])
    async with Store.open(tmp_path / "trace.db") as store:
        result = await _run(project, store, gate, select("floor"), turns=turns)
        rows = await store.sandbox_events(result.run_id)
    assert result.outcome == "step_cap_reached"
    assert [(r.step, r.kind) for r in rows] == [
        (1, "workdir_created"),
        (1, "gate_exec"),
        (2, "gate_exec"),
        (3, "gate_exec"),
        (3, "workdir_removed"),
    ]
    assert not _created(rows).exists()


async def test_a_content_gate_makes_no_scratch(project: Path, tmp_path: Path) -> None:
    async with Store.open(tmp_path / "trace.db") as store:
        result = await _run(
            project, store, WorkspaceFileContains("README.md", "never"), select("floor")
        )
        rows = await store.sandbox_events(result.run_id)
    assert result.outcome == "step_cap_reached" and rows == []


async def _until(path: Path) -> None:
    for _ in range(400):
        if await asyncio.to_thread(path.exists):
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"{path} never appeared")


async def test_cancelling_the_run_mid_gate_removes_the_scratch(
    project: Path, tmp_path: Path
) -> None:
    cancel = CancelToken()
    async with Store.open(tmp_path / "trace.db") as store:
        running = asyncio.ensure_future(
            _run(project, store, _gate(HANGS), select("floor"), cancel=cancel)
        )
        await _until(project / "started")
        cancel.cancel()
        result = await running
        rows = await store.sandbox_events(result.run_id)
    assert result.outcome == "cancelled"
    scratch = _created(rows)
    assert [r.kind for r in rows] == ["workdir_created", "workdir_removed"]
    assert not scratch.exists()


async def test_cancelling_the_task_mid_gate_removes_the_scratch(
    project: Path, tmp_path: Path
) -> None:
    async with Store.open(tmp_path / "trace.db") as store:
        running = asyncio.ensure_future(_run(project, store, _gate(HANGS), select("floor")))
        await _until(project / "started")
        running.cancel()
        with pytest.raises(asyncio.CancelledError):
            await running
        (row,) = await store.runs(limit=1)
        rows = await store.sandbox_events(row.id)
    assert row.outcome == "cancelled"
    assert [r.kind for r in rows] == ["workdir_created", "workdir_removed"]
    assert not _created(rows).exists()


class _Broken:
    """A sandbox whose commands raise: the drive ends by an internal error."""

    backend = "portable-floor"

    async def run(
        self,
        argv: Sequence[str],
        cwd: str | os.PathLike[str],
        *,
        limits: Limits = DEFAULT_LIMITS,
        network: bool = False,
        writable: Sequence[str | os.PathLike[str]] = (),
        env: Mapping[str, str] | None = None,
        on_output: OutputSink | None = None,
    ) -> ExecResult:
        raise RuntimeError("the sandbox broke")


async def test_an_exception_in_the_gate_still_removes_the_scratch(
    project: Path, tmp_path: Path
) -> None:
    async with Store.open(tmp_path / "trace.db") as store:
        with pytest.raises(RuntimeError, match="the sandbox broke"):
            await _run(project, store, _gate("pass"), _Broken())
        (row,) = await store.runs(limit=1)
        rows = await store.sandbox_events(row.id)
    assert row.outcome == "failed"
    assert [r.kind for r in rows] == ["workdir_created", "workdir_removed"]
    assert not _created(rows).exists()


class _Cwds:
    """The floor, noting the working directory of every command."""

    def __init__(self) -> None:
        self.inner = select("floor")
        self.backend = self.inner.backend
        self.cwds: list[Path] = []

    async def run(
        self,
        argv: Sequence[str],
        cwd: str | os.PathLike[str],
        *,
        limits: Limits = DEFAULT_LIMITS,
        network: bool = False,
        writable: Sequence[str | os.PathLike[str]] = (),
        env: Mapping[str, str] | None = None,
        on_output: OutputSink | None = None,
    ) -> ExecResult:
        self.cwds.append(Path(cwd))
        return await self.inner.run(argv, cwd, limits=limits, writable=writable, env=env)


@pytest.mark.skipif(shutil.which("rustc") is None, reason="rustc is not installed")
async def test_rust_gates_build_inside_the_scratch(tmp_path: Path) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    seen = _Cwds()
    source = "pub fn add(a: u32, b: u32) -> u32 { a + b }\n"
    outcome = await CompilesRust().passes(Path("lib.rs"), source, seen, scratch=scratch)
    assert outcome.status == "passed", outcome.detail
    assert seen.cwds and all(cwd.parent == scratch.resolve() for cwd in seen.cwds)
    assert list(scratch.iterdir()) == []  # each call's build directory is gone already

"""The post-edit checker with a stand-in sandbox: every way a check can end, and the caps."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from ioh_tui.core.acts import Act
from ioh_tui.core.errors import SandboxError
from ioh_tui.sandbox.base import DEFAULT_LIMITS, ExecResult, Limits, OutputSink
from ioh_tui.toolchain import Toolchain, detect
from ioh_tui.tools import Permit, ToolContext, Workspace
from ioh_tui.tools.checker import cargo_findings, check_after_edit
from ioh_tui.tools.files import edit_file, write_file


class StubSandbox:
    """Answers every run with a fixed result (or raises), and records what it was asked."""

    def __init__(self, result: ExecResult | Exception) -> None:
        self.result = result
        self.calls: list[dict[str, Any]] = []

    @property
    def backend(self) -> str:
        return "stub"

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
        self.calls.append(
            {"argv": list(argv), "cwd": cwd, "limits": limits, "network": network, "env": env}
        )
        if isinstance(self.result, Exception):
            raise self.result
        return self.result


async def _allow(act: Act, target: str, **_: Any) -> Permit:
    return Permit(target)


def _ctx(root: Path, sandbox: StubSandbox, toolchain: Toolchain | None, **kw: Any) -> ToolContext:
    return ToolContext(
        workspace=Workspace.at(root),
        decide=_allow,
        visible=lambda _: True,
        sandbox=sandbox,
        toolchain=toolchain,
        **kw,
    )


def _result(
    stdout: str = "",
    stderr: str = "",
    exit_code: int | None = 0,
    *,
    cap: Any = None,
    signal: int | None = None,
    unavailable: bool = False,
) -> ExecResult:
    return ExecResult(("x",), exit_code, signal, stdout, stderr, cap, "stub", 1.0, unavailable)


def _cargo(root: Path) -> Toolchain:
    (root / "Cargo.toml").write_text("")
    found = detect(root)
    assert found is not None
    return found


def _message(rendered: str) -> str:
    return json.dumps({"reason": "compiler-message", "message": {"rendered": rendered}})


CARGO_OUT = "\n".join(
    [
        json.dumps({"reason": "compiler-artifact", "target": {}}),
        "build script noise, not json",
        "{not json either",
        _message("error[E0308]: mismatched types\n --> src/lib.rs:2:23\n"),
        json.dumps({"reason": "compiler-message", "message": {"rendered": None}}),
        json.dumps({"reason": "build-finished", "success": False}),
    ]
)


def test_cargo_findings_keep_only_rendered_compiler_messages() -> None:
    assert cargo_findings(CARGO_OUT) == "error[E0308]: mismatched types\n --> src/lib.rs:2:23"
    assert cargo_findings("") == ""


async def test_findings_are_appended_with_their_header(tmp_path: Path) -> None:
    sandbox = StubSandbox(_result(CARGO_OUT, "error: could not compile `demo`", 101))
    ctx = _ctx(tmp_path, sandbox, _cargo(tmp_path), exec_timeout_s=42)
    text = await check_after_edit(ctx, "src/lib.rs")
    assert text.startswith("\n[check] `cargo check --message-format=json` (the project's own")
    assert "may name files this edit did not touch" in text
    assert "error[E0308]" in text and "could not compile" not in text
    call = sandbox.calls[0]
    assert call["argv"] == ["cargo", "check", "--message-format=json"]
    assert call["cwd"] == ctx.workspace.root and call["network"] is False
    assert call["limits"].wall_s == 42
    assert call["env"]["CARGO_NET_OFFLINE"] == "true"


async def test_a_clean_check_says_so_in_one_line(tmp_path: Path) -> None:
    ctx = _ctx(tmp_path, StubSandbox(_result(json.dumps({"reason": "build-finished"}))), None)
    ctx.toolchain = _cargo(tmp_path)
    assert await check_after_edit(ctx, "a.rs") == (
        "\n[check clean] `cargo check --message-format=json` reported nothing."
    )


@pytest.mark.parametrize(
    ("result", "why"),
    [
        (_result(exit_code=None, unavailable=True), "`cargo` is not installed here"),
        (_result(exit_code=None, cap="wall"), "did not finish within the 30s exec timeout"),
        (_result(exit_code=None, cap="memory"), "was killed at its memory cap"),
        (_result(exit_code=None, cap="output"), "killed at its output cap before reporting"),
        (_result(exit_code=None, signal=9), "was killed by signal 9"),
        (_result(exit_code=2), "exited 2 with no output"),
        (_result(stderr="error: failed to parse manifest", exit_code=101), "failed to parse"),
        (SandboxError("unshare refused"), "the sandbox could not start"),
    ],
)
async def test_anything_but_a_finished_check_is_unchecked(
    tmp_path: Path, result: ExecResult | Exception, why: str
) -> None:
    ctx = _ctx(tmp_path, StubSandbox(result), _cargo(tmp_path), exec_timeout_s=30)
    text = await check_after_edit(ctx, "src/lib.rs")
    assert text.startswith("\n[edit unchecked] src/lib.rs was written, but nothing checked it: ")
    assert why in text


async def test_other_checkers_pass_their_console_output_through(tmp_path: Path) -> None:
    (tmp_path / "go.mod").write_text("")
    out = _result("", "./main.go:3:2: undefined: x\n", 1)
    text = await check_after_edit(_ctx(tmp_path, StubSandbox(out), detect(tmp_path)), "main.go")
    assert "[check] `go build ./...`" in text and "./main.go:3:2: undefined: x" in text


async def test_skipped_silently_without_a_project_or_a_checker(tmp_path: Path) -> None:
    sandbox = StubSandbox(_result())
    assert await check_after_edit(_ctx(tmp_path, sandbox, None), "a.c") == ""
    (tmp_path / "Makefile").write_text("")
    assert await check_after_edit(_ctx(tmp_path, sandbox, detect(tmp_path)), "a.c") == ""
    assert sandbox.calls == []


async def test_findings_are_bounded_by_the_observation_cap(tmp_path: Path) -> None:
    flood = "\n".join(_message(f"warning: number {i}\n" + "x" * 200) for i in range(500))
    ctx = _ctx(tmp_path, StubSandbox(_result(flood)), _cargo(tmp_path), entry_cap=4000)
    text = await check_after_edit(ctx, "src/lib.rs")
    assert len(text) < 4000 and "characters elided" in text
    assert "warning: number 0" in text and "warning: number 499" in text  # head and tail kept


async def test_the_edit_observation_carries_the_finding(tmp_path: Path) -> None:
    toolchain = _cargo(tmp_path)
    (tmp_path / "lib.rs").write_text("fn a() -> u32 { 1 }\n")
    sandbox = StubSandbox(_result(_message("error[E0308]: mismatched types"), "", 101))
    ctx = _ctx(tmp_path, sandbox, toolchain)
    args = {"path": "lib.rs", "old_text": "1", "new_text": '"one"'}
    result = await edit_file(args, ctx)
    assert result.ok and result.changed  # a finding never turns the edit into a failure
    assert result.output.startswith("[edited lib.rs]") and "error[E0308]" in result.output
    assert (tmp_path / "lib.rs").read_text() == 'fn a() -> u32 { "one" }\n'


async def test_an_unchanged_write_runs_no_check(tmp_path: Path) -> None:
    (tmp_path / "lib.rs").write_text("same")
    sandbox = StubSandbox(_result())
    ctx = _ctx(tmp_path, sandbox, _cargo(tmp_path))
    result = await write_file({"path": "lib.rs", "content": "same"}, ctx)
    assert "unchanged" in result.output and "[check" not in result.output
    assert sandbox.calls == []

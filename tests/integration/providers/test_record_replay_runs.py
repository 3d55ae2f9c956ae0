"""`--record` a whole run over the real wire, then `--replay` it with no server and no key."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ioh_tui.cli import build_parser
from tests.integration.cli.test_exec import FIX, write_scenario

KEY = "sk-ant-record-test-0123456789abcdef"


@pytest.fixture
def served(tmp_path: Path) -> Iterator[subprocess.Popen[str]]:
    """`ioh-tui serve-fake` on the Anthropic wire, on a free loopback port."""
    scenario = write_scenario(tmp_path / "wire.json", *FIX)
    command = ["serve-fake", "--scenario", str(scenario), "--wire", "anthropic"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "ioh_tui", *command],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        yield proc
    finally:
        proc.terminate()
        proc.wait(10)


def listening(proc: subprocess.Popen[str]) -> str:
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    assert line.startswith("listening on http://127.0.0.1:"), line
    return line.removeprefix("listening on ")


def exec_run(
    workspace: Path, store: Path, *options: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    command = [
        *("exec", "make add add", "--workspace", str(workspace)),
        *("--verify-cmd", f"{sys.executable} check_calc.py", "--on-approval", "approve"),
        *("--store", str(store), "--sandbox", "floor", *options),
    ]
    return subprocess.run(
        [sys.executable, "-m", "ioh_tui", *command],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", **(env or {})},
    )


def tool_calls(stdout: str) -> list[tuple[str, dict[str, Any]]]:
    events = [json.loads(line) for line in stdout.splitlines()]
    return [(e["name"], e["arguments"]) for e in events if e["event"] == "tool_call_started"]


def outcome(stdout: str) -> tuple[str, int]:
    last = json.loads(stdout.splitlines()[-1])
    assert last["event"] == "run_finished"
    return last["outcome"], last["steps"]


@pytest.fixture
def recorded(
    served: subprocess.Popen[str], project: Path, tmp_path: Path
) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """A run recorded against the fake server, which is then stopped; the workspace restored."""
    pristine = tmp_path / "pristine"
    shutil.copytree(project, pristine)
    url = listening(served)
    tape = tmp_path / "run.jsonl"
    done = exec_run(
        project,
        tmp_path / "record.db",
        *("--provider", "anthropic", "--base-url", url, "--model", "fake-model"),
        *("--record", str(tape), "--json"),
        env={"ANTHROPIC_API_KEY": KEY},
    )
    assert done.returncode == 0, done.stderr
    served.terminate()
    served.wait(10)
    # The replay runs in the same place from the same files, as a user re-running it would.
    shutil.rmtree(project)
    shutil.copytree(pristine, project)
    return tape, done


def test_a_replayed_run_has_the_same_outcome_and_tool_calls_with_no_server_or_key(
    recorded: tuple[Path, subprocess.CompletedProcess[str]], project: Path, tmp_path: Path
) -> None:
    tape, first = recorded
    again = exec_run(project, tmp_path / "replay.db", "--replay", str(tape), "--json")
    assert again.returncode == 0, again.stderr
    assert outcome(again.stdout) == outcome(first.stdout) == ("success", 2)
    assert tool_calls(again.stdout) == tool_calls(first.stdout)
    assert [name for name, _ in tool_calls(again.stdout)] == ["read_file", "edit_file"]
    assert "a + b" in (project / "calc.py").read_text()


def test_the_key_never_reaches_the_recording(
    recorded: tuple[Path, subprocess.CompletedProcess[str]],
) -> None:
    tape, _ = recorded
    text = tape.read_text()
    assert len(text.splitlines()) == 3, "the version, then one line per answer"
    assert KEY not in text and KEY[-12:] not in text
    assert "authorization" not in text.lower() and "x-api-key" not in text.lower()


def test_a_recording_that_runs_out_ends_the_run_failed_saying_so(
    recorded: tuple[Path, subprocess.CompletedProcess[str]], project: Path, tmp_path: Path
) -> None:
    tape, _ = recorded
    header, first_answer, _ = tape.read_text().splitlines()
    tape.write_text(f"{header}\n{first_answer}\n")
    done = exec_run(project, tmp_path / "short.db", "--replay", str(tape))
    assert done.returncode == 1, done.stderr
    assert "failed" in done.stdout and "the recording ran out" in done.stdout


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (None, "cannot read recording"),
        ("{}\n", "is not an ioh-tui recording"),
        ('{"ioh_tui": "0.1.0"}\n', "holds no answers"),
        ("[" * 100_000 + "\n", "nested too deeply"),
        ('{"ioh_tui": "0.1.0"}\n{"request": ' + "[" * 100_000 + "\n", "nested too deeply"),
    ],
    ids=["missing", "not a recording", "empty", "deep first line", "deep exchange"],
)
def test_a_replay_file_that_cannot_serve_is_one_line_exit_2(
    project: Path, tmp_path: Path, content: str | None, said: str
) -> None:
    tape = tmp_path / "tape.jsonl"
    if content is not None:
        tape.write_text(content)
    done = exec_run(project, tmp_path / "s.db", "--replay", str(tape))
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and said in done.stderr, done.stderr
    assert not (tmp_path / "s.db").exists(), "nothing was started"


def test_record_and_replay_together_is_a_usage_error(project: Path, tmp_path: Path) -> None:
    done = exec_run(
        project, tmp_path / "s.db", "--record", str(tmp_path / "a"), "--replay", str(tmp_path / "b")
    )
    assert done.returncode == 2
    assert "not allowed with argument" in done.stderr and done.stderr.count("\n") == 1


@pytest.mark.parametrize(
    "command", [["run", "goal"], ["exec", "goal"], ["resume", "1"]], ids=lambda c: c[0]
)
def test_run_exec_and_resume_take_record_and_replay(command: list[str]) -> None:
    parser = build_parser()
    assert parser.parse_args([*command, "--record", "a.jsonl"]).record == "a.jsonl"
    assert parser.parse_args([*command, "--replay", "b.jsonl"]).replay == "b.jsonl"

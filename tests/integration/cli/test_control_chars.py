"""Issue 18, item 8: no control character the model chose reaches the operator's terminal raw.

A scripted model puts an OSC 52 clipboard write, a title change, CSI and a C1 CSI into its text,
a command's argv (which the command prints back) and a file path. Every human output of the
command line (exec's progress and result, `runs`, `show`, `approvals`) shows them escaped
(`\\x1b`, `\\x07`, `\\x9b`) and never holds the raw characters; `--json` keeps the exact value.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.integration.cli.test_exec import ioh, write_scenario

CLIPBOARD = "\x1b]52;c;cm0gLXJmIH4=\x07"
TITLE = "\x1b]0;pwned\x07"
CSI = "\x1b[2J\x1b[31m"
C1 = "\x9b31m"
PAYLOAD = f"{CLIPBOARD}{TITLE}{CSI}{C1}boom"
RAW = ("\x1b", "\x07", "\x9b")

TURNS: list[dict[str, Any]] = [
    {
        "text": f"Look: {PAYLOAD}",
        "tool_calls": [
            {"name": "exec", "arguments": {"argv": ["printf", PAYLOAD]}},
            {"name": "write_file", "arguments": {"path": f"x{TITLE}.txt", "content": "hi\n"}},
        ],
    },
    {"text": f"Done {PAYLOAD}"},
]


def _raw_in(text: str) -> list[str]:
    return [c for c in RAW if c in text]


def _exec(project: Path, tmp_path: Path, store: Path, *extra: str) -> tuple[int, str, str]:
    scenario = write_scenario(tmp_path / "s.json", *TURNS)
    done = ioh(
        "exec",
        "show me",
        "--workspace",
        str(project),
        "--provider",
        "scripted",
        "--scenario",
        str(scenario),
        "--store",
        str(store),
        "--sandbox",
        "floor",
        *extra,
    )
    return done.returncode, done.stdout, done.stderr


def test_exec_and_the_trace_commands_show_control_characters_escaped(
    project: Path, tmp_path: Path
) -> None:
    store = tmp_path / "store.db"
    status, out, err = _exec(project, tmp_path, store, "--on-approval", "approve")
    assert status == 0, err
    assert not _raw_in(out + err), (out, err)
    # The command's output (its summary) and the approved argv and path reached the screen,
    # escaped: the attack was carried all the way.
    assert "\\x1b]52;c;cm0gLXJmIH4=\\x07" in err
    assert "\\x1b]0;pwned\\x07" in err and "\\x9b31mboom" in err

    for command in (["runs"], ["show", "1"]):
        shown = ioh(*command, "--store", str(store))
        assert shown.returncode == 0, shown.stderr
        assert not _raw_in(shown.stdout + shown.stderr), (command, shown.stdout)
    show = ioh("show", "1", "--store", str(store)).stdout
    assert "\\x1b]52;c;" in show  # the exec call's summary: the printed payload

    # --json keeps the exact value (JSON escapes control characters itself).
    trace = json.loads(ioh("show", "1", "--json", "--store", str(store)).stdout)
    assert trace["tool_calls"][0]["arguments"]["argv"] == ["printf", PAYLOAD]


def test_pending_decisions_list_escaped_targets(project: Path, tmp_path: Path) -> None:
    store = tmp_path / "store.db"
    status, out, err = _exec(project, tmp_path, store, "--on-approval", "defer")
    assert status != 0 and not _raw_in(out + err), (out, err)
    listed = ioh("approvals", "--store", str(store))
    assert listed.returncode == 0, listed.stderr
    assert "printf" in listed.stdout and "\\x1b]52;c;" in listed.stdout
    assert not _raw_in(listed.stdout + listed.stderr), listed.stdout
    pending = json.loads(ioh("approvals", "--json", "--store", str(store)).stdout.splitlines()[0])
    assert PAYLOAD in pending["target"]


def test_an_error_quoting_what_was_given_is_escaped(tmp_path: Path) -> None:
    missing = tmp_path / f"gone{TITLE}"
    done = ioh("exec", "goal", "--workspace", str(missing), "--provider", "scripted")
    assert done.returncode == 2
    assert not _raw_in(done.stderr) and "\\x1b]0;pwned\\x07" in done.stderr

"""`--reasoning-effort` through the real command against the fake server's wires.

Anthropic's extended thinking is the hard case: each thinking block comes signed, and a turn
that called tools must come back with its blocks, signatures intact, in every later request,
including one a resumed process makes from the store. The fake refuses a request that breaks
that as the API does (`providers/testing/fake_thinking.py`), so a lost block fails the run.
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from ioh_tui.providers.reasoning import THINKING_BUDGETS
from ioh_tui.providers.testing.fake_thinking import fake_signature
from tests.fakes.provider_server import serving_in_thread
from tests.integration.cli.test_exec import ioh

READ = {"name": "read_file", "arguments": {"path": "calc.py"}}
EDIT = {
    "name": "edit_file",
    "arguments": {"path": "calc.py", "old_text": "a - b", "new_text": "a + b"},
}
TURNS: list[dict[str, Any]] = [
    {"thinking": "Read the code first.", "text": "Reading.", "tool_calls": [READ]},
    {"thinking": "The sign is wrong.", "text": "Fixing.", "tool_calls": [EDIT]},
    {"text": "Fixed."},
]
FIXED = "def add(a, b):\n    return a + b\n"


def _run(server_url: str, project: Path, store: Path, *extra: str) -> Any:
    # No criterion: the run goes on until the model stops, so every turn's request is made.
    env_args = ["--provider", "anthropic", "--base-url", server_url, "--model", "claude-x"]
    options = ["--workspace", str(project), "--store", str(store), "--json", "--sandbox", "floor"]
    return ioh("exec", "fix add", *options, *env_args, *extra, cwd=project, env=_env())


def _env() -> dict[str, str]:
    return {**os.environ, "ANTHROPIC_API_KEY": "sk-ant-test-Abc123Def456Ghi789"}


def _assistant_blocks(body: dict[str, Any]) -> list[list[dict[str, Any]]]:
    return [m["content"] for m in body["messages"] if m["role"] == "assistant"]


def test_thinking_is_asked_for_and_each_signed_block_goes_back(
    project: Path, tmp_path: Path
) -> None:
    with serving_in_thread({"model": "claude-x", "turns": TURNS}, wire="anthropic") as server:
        done = _run(
            server.base_url,
            project,
            tmp_path / "s.db",
            "--on-approval",
            "approve",
            "--reasoning-effort",
            "high",
        )
        bodies = [r.body for r in server.requests]
    assert done.returncode == 0, done.stderr
    assert (project / "calc.py").read_text() == FIXED
    budget = THINKING_BUDGETS["high"]
    assert all(b["thinking"] == {"type": "enabled", "budget_tokens": budget} for b in bodies)
    assert all(b["max_tokens"] > budget for b in bodies)
    # The third request carries both earlier turns, each opening with its own signed thought.
    first, second = _assistant_blocks(bodies[2])
    assert first[0] == {
        "type": "thinking",
        "thinking": "Read the code first.",
        "signature": fake_signature("Read the code first."),
    }
    assert second[0]["signature"] == fake_signature("The sign is wrong.")
    assert [b["type"] for b in second] == ["thinking", "text", "tool_use"]
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert "".join(e["text"] for e in events if e["event"] == "thinking_delta").startswith("Read")


def test_without_an_effort_nothing_is_asked_and_no_thinking_goes_back(
    project: Path, tmp_path: Path
) -> None:
    with serving_in_thread({"model": "claude-x", "turns": TURNS}, wire="anthropic") as server:
        done = _run(server.base_url, project, tmp_path / "s.db", "--on-approval", "approve")
        bodies = [r.body for r in server.requests]
    assert done.returncode == 0, done.stderr
    assert not any("thinking" in b for b in bodies)
    assert all(
        block["type"] != "thinking" for b in bodies for m in _assistant_blocks(b) for block in m
    )


@pytest.mark.parametrize("pause", ["defer", "step cap"])
def test_a_resumed_run_sends_the_stored_thinking_back(
    project: Path, tmp_path: Path, pause: str
) -> None:
    """Paused after a thinking turn (an ask deferred, or the step cap), resumed in a new process.

    Deferred: the asking turn is the staged one. Step cap: the last turn is read back from the
    committed transcript. Either way the fake refuses the next request if its thinking is lost.
    """
    store = tmp_path / "s.db"
    with serving_in_thread({"model": "claude-x", "turns": TURNS}, wire="anthropic") as server:
        if pause == "defer":
            first = _run(
                server.base_url,
                project,
                store,
                "--on-approval",
                "defer",
                "--reasoning-effort",
                "low",
            )
            assert first.returncode == 4, first.stderr
            resume = ["--decide", "approve"]
        else:
            first = _run(
                server.base_url,
                project,
                store,
                "--on-approval",
                "approve",
                "--reasoning-effort",
                "low",
                "--max-steps",
                "1",
            )
            assert first.returncode == 3, first.stderr
            resume = ["--max-steps", "5", "--on-approval", "approve"]
        run_id = json.loads(first.stdout.splitlines()[0])["run_id"]
        again = ioh(
            "resume",
            str(run_id),
            "--store",
            str(store),
            "--headless",
            "--json",
            *resume,
            cwd=project,
            env=_env(),
        )
        bodies = [r.body for r in server.requests]
    assert again.returncode == 0, again.stdout + again.stderr
    assert (project / "calc.py").read_text() == FIXED
    # The effort was kept with the run: the resumed process asked for thinking too.
    assert bodies[-1]["thinking"]["budget_tokens"] == THINKING_BUDGETS["low"]
    signed = [
        m[0]["signature"] for m in _assistant_blocks(bodies[-1]) if m[0]["type"] == "thinking"
    ]
    assert signed[:2] == [
        fake_signature("Read the code first."),
        fake_signature("The sign is wrong."),
    ]
    stored = sqlite3.connect(store).execute(
        "SELECT thoughts FROM messages WHERE thoughts IS NOT NULL"
    )
    assert len(stored.fetchall()) >= 2
    shown = ioh("show", str(run_id), "--store", str(store), cwd=project, env=_env()).stdout
    assert "reasoning effort low" in shown

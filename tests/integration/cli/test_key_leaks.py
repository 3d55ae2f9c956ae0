"""Issue 18, item 9: a configured key appears in no store row, no event, no output line.

`ioh-tui exec` runs against a real loopback server speaking the OpenAI wire, with a fake key in
`OPENAI_API_KEY`. The model repeats the key split across two text pieces; its command prints a
workspace file holding the key and the harness's own environment; the next answer is a 200
stream whose error event echoes the key. Every table of the SQLite file, every `--json` event,
every human line, every trace command and a `--record` file are then searched for the key and
for its first half.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.integration.cli.test_exec import ioh
from tests.integration.providers.wire_server import Reply, WireServer
from tests.integration.providers.wire_streams import ROLE, chunk, frame, openai_events, usage

KEY = "sk-test-LEAKCANARY-0123456789abcdefghijklmnop"
HALF = KEY[: len(KEY) // 2]
SCRIPT = (
    "cat key.txt; "
    # The harness is the parent of the floor's subreaper (this shell's parent).
    "harness=$(cut -d' ' -f4 /proc/$PPID/stat); tr '\\0' '\\n' < /proc/$harness/environ; env"
)


def _turn_with_a_command() -> bytes:
    call = {
        "index": 0,
        "id": "call_1",
        "type": "function",
        "function": {"name": "exec", "arguments": json.dumps({"argv": ["sh", "-c", SCRIPT]})},
    }
    return frame(
        openai_events(
            [
                chunk(ROLE),
                chunk({"content": f"Your key is {KEY[:13]}"}),
                chunk({"content": f"{KEY[13:]}, I will print it."}),
                chunk({"tool_calls": [call]}),
                chunk({}, finish="tool_calls"),
                chunk(choices=False, usage=usage(50, 20)),
            ]
        )
    )


def _stream_error_echoing_the_key() -> bytes:
    error = {"error": {"message": f"Incorrect API key provided: {KEY}.", "type": "invalid_key"}}
    return frame(openai_events([chunk(ROLE), chunk({"content": "Par"}), error], done=False))


@pytest.fixture
def server() -> Iterator[WireServer]:
    with WireServer() as served:
        yield served


def _exec(server: WireServer, project: Path, tmp_path: Path, *extra: str) -> Any:
    server.queue(Reply(_turn_with_a_command()), Reply(_stream_error_echoing_the_key()))
    env = {
        "PATH": os.environ["PATH"],
        "OPENAI_API_KEY": KEY,
        "IOH_TUI_HOME": str(tmp_path / "home"),
    }
    return ioh(
        "exec",
        "print my key",
        "--workspace",
        str(project),
        "--provider",
        "openai",
        "--base-url",
        f"{server.url}/v1",
        "--model",
        "gpt-test",
        "--max-retries",
        "0",
        "--on-approval",
        "approve",
        "--store",
        str(tmp_path / "store.db"),
        "--sandbox",
        "floor",
        *extra,
        env=env,
    )


def _store_text(path: Path) -> str:
    """Every value of every row of every table, as text."""
    out: list[str] = []
    with sqlite3.connect(path) as db:
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        for table in tables:
            for row in db.execute(f'SELECT * FROM "{table}"'):
                for value in row:
                    if isinstance(value, bytes):
                        value = value.decode("utf-8", "replace")
                    out.append(str(value))
    return "\n".join(out)


def _leaks(text: str) -> bool:
    return KEY in text or HALF in text


@pytest.mark.parametrize("as_json", [True, False], ids=["json", "human"])
def test_a_key_echoed_anywhere_is_stored_emitted_and_printed_masked(
    server: WireServer, project: Path, tmp_path: Path, as_json: bool
) -> None:
    (project / "key.txt").write_text(f"OPENAI_API_KEY={KEY}\n")
    recording = tmp_path / "answers.jsonl"
    extra = ["--json", "--record", str(recording)] if as_json else []
    done = _exec(server, project, tmp_path, *extra)
    assert done.returncode == 1, done.stderr  # the second answer failed: run `failed`
    assert server.received[0].headers["authorization"] == f"Bearer {KEY}"  # the real key went
    assert not _leaks(done.stdout) and not _leaks(done.stderr), (done.stdout, done.stderr)
    if not as_json:  # the floor says what it cannot hide where it is chosen; as root it runs
        # commands as nobody, who cannot read the harness (test_root_user.py), so nothing to say
        assert "WARNING: the harness runs as root" not in done.stderr

    stored = _store_text(tmp_path / "store.db")
    assert not _leaks(stored)
    # What carried the key was kept, masked: the text, the command's output, the error.
    assert "Your key is [redacted], I will print it." in stored
    assert "OPENAI_API_KEY=[redacted]" in stored
    assert "Incorrect API key provided: [redacted]." in stored

    if as_json:
        kept = recording.read_text()  # --record keeps the model's answers on disk too
        assert not _leaks(kept) and "Your key is [redacted]" in kept
        events = [json.loads(line) for line in done.stdout.splitlines()]
        text = "".join(e["text"] for e in events if e["event"] == "text_delta" and e["step"] == 1)
        assert text == "Your key is [redacted], I will print it."
        finished = events[-1]
        assert finished["event"] == "run_finished" and "[redacted]" in finished["detail"]
    for command in (["show", "1"], ["show", "1", "--json"], ["runs"], ["runs", "--json"]):
        shown = ioh(*command, "--store", str(tmp_path / "store.db"))
        assert shown.returncode == 0 and not _leaks(shown.stdout + shown.stderr), command


def test_a_key_in_the_base_url_is_refused_and_never_stored(project: Path, tmp_path: Path) -> None:
    store = tmp_path / "store.db"
    done = ioh(
        "exec",
        "goal",
        "--workspace",
        str(project),
        "--provider",
        "compatible",
        "--model",
        "m",
        "--base-url",
        f"http://user:{KEY}@127.0.0.1:9/v1",
        "--store",
        str(store),
        env={"PATH": os.environ["PATH"], "IOH_TUI_HOME": str(tmp_path / "home")},
    )
    assert done.returncode == 2
    assert done.stdout == "" and len(done.stderr.splitlines()) == 1, done.stderr
    assert "user name or password" in done.stderr and not _leaks(done.stderr)
    assert not store.exists() or not _leaks(_store_text(store))

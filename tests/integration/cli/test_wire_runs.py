"""A whole run over the real wire: `serve-fake` in one process, `ioh-tui exec` in another."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.cli.test_exec import FIX, ioh, write_scenario


@pytest.fixture(params=["openai", "anthropic"])
def served(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, str]]:
    """A serve-fake process on a free loopback port; yields (wire, base URL)."""
    scenario = write_scenario(tmp_path / "wire.json", *FIX)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "ioh_tui",
            "serve-fake",
            "--scenario",
            str(scenario),
            "--wire",
            request.param,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    assert line.startswith("listening on http://127.0.0.1:"), line
    url = line.removeprefix("listening on ")
    try:
        yield request.param, url + ("/v1" if request.param == "openai" else "")
    finally:
        proc.terminate()
        assert proc.wait(10) == 0


def test_exec_completes_a_run_over_the_real_wire(
    served: tuple[str, str], project: Path, tmp_path: Path
) -> None:
    wire, url = served
    provider = ["--provider", "compatible"] if wire == "openai" else ["--provider", "anthropic"]
    env = {"PATH": "/usr/bin:/bin", "ANTHROPIC_API_KEY": "sk-ant-test-not-a-real-key-123456"}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "ioh_tui",
            "exec",
            "make add add",
            "--workspace",
            str(project),
            *provider,
            "--base-url",
            url,
            "--model",
            "fake-model",
            "--verify-cmd",
            f"{sys.executable} check_calc.py",
            "--on-approval",
            "approve",
            "--json",
            "--store",
            str(tmp_path / "s.db"),
            "--sandbox",
            "floor",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert events[-1]["outcome"] == "success" and events[-1]["steps"] == 2
    streamed = "".join(e["text"] for e in events if e["event"] == "text_delta" and e["step"] == 2)
    assert streamed == "Fixing the operator."
    usage = [e for e in events if e["event"] == "usage"]
    assert len(usage) == 2 and all(
        u["input_tokens"] > 0 and u["ttft_ms"] is not None for u in usage
    )
    assert "sk-ant-test" not in done.stdout + done.stderr
    trace = ioh("show", "1", "--json", "--store", str(tmp_path / "s.db")).stdout
    assert (
        "sk-ant-test" not in trace and (tmp_path / "s.db").read_bytes().find(b"sk-ant-test") == -1
    )


def test_resume_needs_no_provider_options_even_when_the_model_came_from_the_environment(
    served: tuple[str, str], project: Path, tmp_path: Path
) -> None:
    wire, url = served
    if wire != "openai":
        pytest.skip("one wire shows it")
    store = str(tmp_path / "s.db")
    base = {"PATH": "/usr/bin:/bin", "OPENAI_API_KEY": "sk-test-not-a-real-key-123456"}
    first = subprocess.run(
        [
            *(sys.executable, "-m", "ioh_tui", "exec", "make add add"),
            *("--workspace", str(project), "--provider", "openai", "--base-url", url),
            *("--verify-cmd", f"{sys.executable} check_calc.py", "--on-approval", "defer"),
            *("--store", store, "--sandbox", "floor"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env={**base, "OPENAI_MODEL": "fake-model-from-env"},
    )
    assert first.returncode == 4, first.stderr  # paused on the write, the run is live
    # A new shell: the key is there, the model variable and every provider option are not.
    done = subprocess.run(
        [
            *(sys.executable, "-m", "ioh_tui", "resume", "1", "--headless", "--decide"),
            *("approve", "--store", store, "--sandbox", "floor", "--json"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env=base,
    )
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert events[0]["model"] == "fake-model-from-env"
    assert events[-1]["outcome"] == "success"

"""Retries that last and `--fallback`, as a user runs them: `ioh-tui exec` against loopback servers.

The model servers are `FakeModelServer`s speaking the exact OpenAI or Anthropic wire on
127.0.0.1; the run is a real `ioh-tui` process with the real sandbox, gate and store.
"""

from __future__ import annotations

import copy
import json
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from ioh_tui.providers.retry import RetryPolicy
from tests.fakes.provider_server import serving_in_thread
from tests.integration.cli.test_exec import FIX

KEY = "sk-ant-test-not-a-real-key-123456"
OUTAGE = {"status": 503, "fail_for_s": 3600}
"""A provider down for the length of the test."""


def ioh(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ioh_tui", *args],
        capture_output=True,
        text=True,
        timeout=150,
        env={"PATH": "/usr/bin:/bin", **(env or {})},
    )


def scenario(*first_turn_errors: dict[str, Any]) -> dict[str, Any]:
    """The two-step fix, its first turn failing first as given."""
    turns = copy.deepcopy(FIX)
    turns[0]["errors"] = list(first_turn_errors)
    return {"model": "fake-model", "turns": turns}


def run_options(project: Path, store: Path) -> list[str]:
    return [
        "--workspace",
        str(project),
        "--model",
        "fake-model",
        "--verify-cmd",
        f"{sys.executable} check_calc.py",
        "--on-approval",
        "approve",
        "--store",
        str(store),
        "--sandbox",
        "floor",
    ]


def events_of(done: subprocess.CompletedProcess[str]) -> list[dict[str, Any]]:
    return [json.loads(line) for line in done.stdout.splitlines()]


def calls(store: Path) -> list[tuple[int, str, str | None]]:
    with sqlite3.connect(store) as db:
        rows = db.execute("SELECT step, provider, failure FROM provider_calls ORDER BY id")
        return [(int(step), str(provider), failure) for step, provider, failure in rows]


@pytest.mark.slow
def test_a_503_outage_of_20s_is_outlasted_within_a_60s_budget_by_default(
    project: Path, tmp_path: Path
) -> None:
    store = tmp_path / "s.db"
    outage = {"status": 503, "fail_for_s": 20}
    with serving_in_thread(scenario(outage)) as server:
        started = time.monotonic()
        done = ioh(
            "exec",
            "make add add",
            "--provider",
            "compatible",
            "--base-url",
            server.base_url,
            "--time-budget",
            "60",
            "--json",
            *run_options(project, store),
        )
        took = time.monotonic() - started
        served = [r.served for r in server.requests]
    assert done.returncode == 0, done.stderr
    events = events_of(done)
    assert events[-1]["outcome"] == "success"
    assert events[0]["budgets"]["max_retries"] == 10, "no --max-retries: the default"
    retries = [e for e in events if e["event"] == "retry"]
    delays = [e["delay_ms"] for e in retries]
    assert len(delays) >= 5, "an outage of 20 s needs at least 15.5 s of waits: 5 retries or more"
    policy = RetryPolicy()
    for attempt, delay in enumerate(delays, start=1):
        ceiling = policy.ceiling_s(attempt) * 1000
        assert ceiling / 2 - 1 <= delay <= ceiling + 1, (attempt, delay)
    assert delays[:5] == sorted(delays[:5]) and delays[4] > 4 * delays[0], "backoff grows"
    assert [e["attempt"] for e in retries] == list(range(1, len(retries) + 1))
    assert {e["error_kind"] for e in retries} == {"overloaded (HTTP 503)"}
    assert served == ["http 503"] * len(retries) + ["answer", "answer"]
    assert 20 <= took < 60
    assert [failure for _, _, failure in calls(store)] == ["overloaded (HTTP 503)"] * len(
        retries
    ) + [None, None]


def fallback_run(
    primary: dict[str, Any], *args: str
) -> tuple[subprocess.CompletedProcess[str], list[str], list[str]]:
    """`ioh-tui ARGS`, the primary an Anthropic-wire server, the fallback an OpenAI-wire one.

    `{first}` in `args` is the primary's base URL; returns what each server served.
    """
    with (
        serving_in_thread(primary, wire="anthropic") as first,
        serving_in_thread(scenario(), wire="openai") as second,
    ):
        done = ioh(
            *(a.replace("{first}", first.base_url) for a in args),
            env={"ANTHROPIC_API_KEY": KEY, "OPENAI_BASE_URL": second.base_url},
        )
        return done, [r.served for r in first.requests], [r.served for r in second.requests]


def fallback_exec(
    project: Path, store: Path, primary: dict[str, Any], *extra: str
) -> tuple[subprocess.CompletedProcess[str], list[str], list[str]]:
    """`exec` with `--provider anthropic` and `--fallback compatible:fake-model`."""
    return fallback_run(
        primary,
        "exec",
        "make add add",
        "--provider",
        "anthropic",
        "--base-url",
        "{first}",
        "--fallback",
        "compatible:fake-model",
        *extra,
        *run_options(project, store),
    )


def test_fallback_takes_the_step_when_the_primary_s_retries_are_spent(
    project: Path, tmp_path: Path
) -> None:
    store = tmp_path / "s.db"
    done, first, second = fallback_exec(
        project, store, scenario(OUTAGE), "--max-retries", "1", "--json"
    )
    assert done.returncode == 0, done.stderr
    events = events_of(done)
    assert events[-1]["outcome"] == "success"
    assert events[0]["provider"] == "anthropic -> compatible"
    fell = [e for e in events if e["event"] == "fallback"]
    assert [(e["step"], e["from_provider"], e["to_provider"]) for e in fell] == [
        (1, "anthropic", "compatible")
    ]
    kinds = [e["event"] for e in events if e.get("step") == 1]
    assert kinds.index("fallback") < kinds.index("text_delta"), "announced before it streams"
    assert [e["attempt"] for e in events if e["event"] == "retry"] == [1]
    # Step 1: the primary fails twice (one retry), the fallback answers. Step 2: the primary is
    # asked first again and, its outage being on the first turn only, answers.
    assert first == ["http 503", "http 503", "answer"]
    assert second == ["answer"]
    assert calls(store) == [
        (1, "anthropic", "overloaded (HTTP 503)"),
        (1, "anthropic", "overloaded (HTTP 503)"),
        (1, "compatible", None),
        (2, "anthropic", None),
    ]
    assert KEY not in done.stdout + done.stderr


def test_the_progress_trace_says_who_took_over(project: Path, tmp_path: Path) -> None:
    done, _, _ = fallback_exec(project, tmp_path / "s.db", scenario(OUTAGE), "--max-retries", "0")
    assert done.returncode == 0, done.stderr
    assert "  fallback: anthropic failed, compatible takes over" in done.stderr.splitlines()
    assert " success after 2 steps" in done.stdout


def test_a_bad_key_does_not_fall_over(project: Path, tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    done, first, second = fallback_exec(project, store, scenario({"status": 401}), "--json")
    assert done.returncode == 1, done.stderr
    events = events_of(done)
    assert events[-1]["outcome"] == "failed"
    assert "auth" in events[-1]["detail"]
    assert not [e for e in events if e["event"] in ("fallback", "retry")]
    assert (first, second) == (["http 401"], [])
    assert calls(store) == [(1, "anthropic", "auth (HTTP 401)")]


@pytest.mark.slow
def test_a_resumed_run_keeps_its_fallback(project: Path, tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    primary = scenario(OUTAGE)
    primary["turns"][1]["errors"] = [OUTAGE]
    done, _, _ = fallback_exec(project, store, primary, "--max-retries", "0", "--max-steps", "1")
    assert done.returncode == 3, done.stderr
    # No provider option: the stored ones (the primary's URL is a new server's now).
    again, _, answered = fallback_run(
        primary,
        "resume",
        "1",
        "--headless",
        "--json",
        "--max-steps",
        "3",
        "--on-approval",
        "approve",
        "--base-url",
        "{first}",
        "--store",
        str(store),
    )
    assert again.returncode == 0, again.stderr
    events = events_of(again)
    assert events[-1]["outcome"] == "success"
    assert [(e["step"], e["to_provider"]) for e in events if e["event"] == "fallback"] == [
        (2, "compatible")
    ]
    assert answered == ["answer"]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("gemini:pro", "--fallback 'gemini:pro': unknown provider 'gemini'"),
        ("compatible:m", "OPENAI_BASE_URL"),
    ],
)
def test_a_bad_fallback_is_one_line_and_exit_2(
    project: Path, tmp_path: Path, spec: str, message: str
) -> None:
    (tmp_path / "s.json").write_text(json.dumps(scenario()))
    done = ioh(
        "exec",
        "make add add",
        "--scenario",
        str(tmp_path / "s.json"),
        "--fallback",
        spec,
        *run_options(project, tmp_path / "s.db"),
    )
    assert done.returncode == 2
    assert message in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert "Traceback" not in done.stderr

"""`ioh-tui exec` and the trace commands as a user runs them: real processes, real files."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from ioh_tui.core.events import EVENT_TYPES

FIELDS = {
    "run_started": {"goal", "mode", "budgets"},
    "step_started": {"step"},
    "text_delta": {"step", "text"},
    "thinking_delta": {"step", "text"},
    "tool_call_started": {"step", "call_id", "name", "arguments"},
    "tool_call_finished": {"step", "call_id", "name", "ok", "refused", "summary"},
    "approval_requested": {"request_id", "act", "target", "rule", "layer"},
    "approval_resolved": {"request_id", "decision", "modified", "remembered"},
    "usage": {"step", "input_tokens", "output_tokens", "ttft_ms", "latency_ms", "cost_usd"},
    "verification_started": {"criterion"},
    "verification_finished": {"status", "detail"},
    "run_finished": {"outcome", "steps", "tokens"},
}


def ioh(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ioh_tui", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=60,
    )


def write_scenario(path: Path, *turns: dict[str, Any]) -> Path:
    path.write_text(json.dumps({"model": "m", "turns": list(turns)}))
    return path


FIX: list[dict[str, Any]] = [
    {
        "text": "Reading calc.py now.",
        "tool_calls": [{"name": "read_file", "arguments": {"path": "calc.py"}}],
    },
    {
        "thinking": "sign",
        "text": "Fixing the operator.",
        "tool_calls": [
            {
                "name": "edit_file",
                "arguments": {"path": "calc.py", "old_text": "a - b", "new_text": "a + b"},
            }
        ],
    },
    {"text": "Fixed."},
]


def test_exec_json_streams_the_documented_events_and_nothing_else(
    project: Path, tmp_path: Path
) -> None:
    scenario = write_scenario(tmp_path / "s.json", *FIX)
    store = tmp_path / "store.db"
    done = ioh(
        "exec",
        "make add add",
        "--workspace",
        str(project),
        "--provider",
        "scripted",
        "--scenario",
        str(scenario),
        "--verify-cmd",
        f"{sys.executable} check_calc.py",
        "--on-approval",
        "approve",
        "--json",
        "--store",
        str(store),
        "--sandbox",
        "floor",
    )
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]  # every stdout line is JSON
    assert events[0]["event"] == "run_started" and events[-1]["event"] == "run_finished"
    assert events[-1]["outcome"] == "success" and events[-1]["steps"] == 2
    for e in events:
        assert e["event"] in EVENT_TYPES and isinstance(e["run_id"], int)
        assert FIELDS.get(e["event"], set()) <= e.keys(), e
    assert [e["step"] for e in events if e["event"] == "step_started"] == [1, 2]
    texts = {
        s: "".join(e["text"] for e in events if e["event"] == "text_delta" and e["step"] == s)
        for s in (1, 2)
    }
    assert texts == {1: "Reading calc.py now.", 2: "Fixing the operator."}
    kinds = [e["event"] for e in events]
    assert (
        kinds.index("approval_requested")
        < kinds.index("approval_resolved")
        < kinds.index("run_finished")
    )

    listed = [
        json.loads(line)
        for line in ioh("runs", "--json", "--store", str(store)).stdout.splitlines()
    ]
    assert (
        listed[0]["outcome"] == "success"
        and listed[0]["steps"] == 2
        and listed[0]["goal"] == "make add add"
    )
    trace = json.loads(
        ioh("show", str(listed[0]["run_id"]), "--json", "--store", str(store)).stdout
    )
    assert [c["name"] for c in trace["tool_calls"]] == ["read_file", "edit_file"]
    assert [g["status"] for g in trace["verification"]] == ["failed", "passed"]
    sandboxed = [(e["kind"], e["backend"]) for e in trace["sandbox_events"]]
    assert sandboxed[0] == ("workdir_created", "portable-floor")
    assert sandboxed[-1] == ("workdir_removed", "portable-floor")
    assert ("gate_exec", "portable-floor") in sandboxed
    human = ioh("show", str(listed[0]["run_id"]), "--store", str(store))
    assert human.returncode == 0 and "edit_file" in human.stdout and "gate passed" in human.stdout
    assert "workdir_created" in human.stdout and "workdir_removed" in human.stdout
    assert "gate_exec       [portable-floor]" in human.stdout


def test_exec_default_denies_asks_and_the_model_reads_it(project: Path, tmp_path: Path) -> None:
    scenario = write_scenario(tmp_path / "s.json", FIX[1], {"text": "ok"})
    done = ioh(
        "exec",
        "fix",
        "--workspace",
        str(project),
        "--scenario",
        str(scenario),
        "--max-steps",
        "2",
        "--verify-cmd",
        f"{sys.executable} check_calc.py",
        "--json",
        "--store",
        str(tmp_path / "s.db"),
    )
    events = [json.loads(line) for line in done.stdout.splitlines()]
    resolved = [e for e in events if e["event"] == "approval_resolved"]
    assert done.returncode == 3 and resolved[0]["decision"] == "deny"
    assert "a - b" in (project / "calc.py").read_text()


def test_step_cap_exits_3(project: Path, tmp_path: Path) -> None:
    turn = {"tool_calls": [{"name": "read_file", "arguments": {"path": "calc.py"}}]}
    scenario = write_scenario(tmp_path / "s.json", *[turn] * 5)
    done = ioh(
        "exec",
        "never",
        "--workspace",
        str(project),
        "--scenario",
        str(scenario),
        "--max-steps",
        "3",
        "--verify-cmd",
        f"{sys.executable} check_calc.py",
        "--store",
        str(tmp_path / "s.db"),
    )
    assert done.returncode == 3
    assert done.stdout.startswith("run 1 step_cap_reached after 3 steps")


def test_a_run_that_repeats_itself_exits_1_stalled(project: Path, tmp_path: Path) -> None:
    turn = {"tool_calls": [{"name": "read_file", "arguments": {"path": "calc.py"}}]}
    scenario = write_scenario(tmp_path / "s.json", *[turn] * 10)
    done = ioh(
        "exec",
        "never",
        "--workspace",
        str(project),
        "--scenario",
        str(scenario),
        "--stall-after",
        "2",
        "--context-window",
        "50000",
        "--verify-cmd",
        f"{sys.executable} check_calc.py",
        "--store",
        str(tmp_path / "s.db"),
        "--json",
    )
    assert done.returncode == 1, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    started, finished = events[0], events[-1]
    assert started["budgets"]["stall_after"] == 2
    assert started["context_window"] == 50000
    warned = [e for e in events if e["event"] == "stall_warning"]
    assert [e["step"] for e in warned] == [2]
    assert (finished["outcome"], finished["steps"]) == ("stalled", 4)


@pytest.mark.parametrize(
    ("setup", "args", "message"),
    [
        ("bad_toml", ["--contract", "{dir}/c.toml"], "not valid TOML"),
        ("unknown_key", ["--contract", "{dir}/c.toml"], "unknown key 'colour'"),
        ("bad_budget", ["--contract", "{dir}/c.toml"], "budgets.max_steps"),
        ("bad_scenario", ["--scenario", "{dir}/s.json"], "not valid JSON"),
        ("bad_turn", ["--scenario", "{dir}/s.json"], "unknown key 'txt'"),
        ("none", ["--workspace", "{dir}/missing"], "does not exist"),
        ("none", ["--provider", "gemini"], "invalid choice: 'gemini'"),
        ("none", ["--verify-cmd", "no-such-gate-program -q"], "'no-such-gate-program' is not"),
        ("none", ["--provider", "openai"], "OPENAI_API_KEY is not set"),
        ("none", [], "no provider configured"),
    ],
)
def test_bad_input_is_one_clear_line_and_exit_2(
    tmp_path: Path, setup: str, args: list[str], message: str
) -> None:
    files = {
        "bad_toml": ("c.toml", "goal = [unclosed\n"),
        "unknown_key": ("c.toml", 'goal = "x"\ncolour = "red"\n'),
        "bad_budget": ("c.toml", 'goal = "x"\n[budgets]\nmax_steps = "many"\n'),
        "bad_scenario": ("s.json", "{not json"),
        "bad_turn": ("s.json", '{"turns": [{"txt": "hi"}]}'),
    }
    if setup in files:
        name, text = files[setup]
        (tmp_path / name).write_text(text)
    argv = [a.format(dir=tmp_path) for a in args]
    done = ioh("exec", "goal", "--workspace", str(tmp_path), *argv, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], done.stderr
    assert "Traceback" not in done.stderr


def test_version_and_help_on_every_command() -> None:
    assert ioh("--version").stdout.startswith("ioh-tui ")
    for command in ("demo", "run", "exec", "runs", "show", "approvals", "resume", "serve-fake"):
        done = ioh(command, "--help")
        assert done.returncode == 0 and done.stdout.startswith(f"usage: ioh-tui {command}"), command


def test_unknown_run_is_exit_2(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    write_scenario(tmp_path / "x.json", {"text": "hi"})
    (tmp_path / "ws").mkdir()
    ioh(
        "exec",
        "hi",
        "--workspace",
        str(tmp_path / "ws"),  # not around the store: that is refused
        "--scenario",
        str(tmp_path / "x.json"),
        "--store",
        str(store),
    )
    for args in (
        ["show", "99"],
        ["resume", "99", "--headless", "--scenario", str(tmp_path / "x.json")],
    ):
        done = ioh(*args, "--store", str(store))
        assert (
            done.returncode == 2
            and "no run with id 99" in done.stderr
            and "Traceback" not in done.stderr
        )


def _listed(store: Path) -> list[dict[str, Any]]:
    done = ioh("runs", "--json", "--store", str(store))
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_runs_and_show_say_crashed_once_the_driving_process_is_killed(tmp_path: Path) -> None:
    # The stored status stays `running` after a kill -9; the commands must not show it so.
    scenario = write_scenario(tmp_path / "s.json", {"text": "slow", "delay_ms": 60_000})
    store = tmp_path / "store.db"
    (tmp_path / "ws").mkdir()
    argv = [sys.executable, "-m", "ioh_tui", "exec", "wait", "--workspace", str(tmp_path / "ws")]
    argv += ["--provider", "scripted", "--scenario", str(scenario), "--store", str(store)]
    driver = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while not (store.exists() and _listed(store)):
            assert time.monotonic() < deadline, "the run never started"
            time.sleep(0.1)
        [live] = _listed(store)
        assert (live["status"], live["state"]) == ("running", "running")
    finally:
        driver.kill()
        driver.wait()
    [dead] = _listed(store)
    assert (dead["status"], dead["state"]) == ("running", "crashed")
    table = ioh("runs", "--store", str(store)).stdout.splitlines()
    assert table[1].split()[:2] == [str(dead["run_id"]), "crashed"]
    shown = ioh("show", str(dead["run_id"]), "--store", str(store)).stdout.splitlines()
    assert shown[2].split()[:3] == ["crashed", "after", "0"]
    trace = json.loads(ioh("show", str(dead["run_id"]), "--json", "--store", str(store)).stdout)
    assert trace["run"]["state"] == "crashed"


def test_a_command_cut_by_a_crash_is_asked_again_saying_so(project: Path, tmp_path: Path) -> None:
    # `--on-approval approve` answers the policy's asks; a command the crash cut is the
    # operator's to run again, and the headless output says why it waits.
    sleep = {"name": "exec", "arguments": {"argv": ["sleep", "30"]}}
    scenario = write_scenario(tmp_path / "s.json", {"tool_calls": [sleep]}, {"text": "done"})
    store = tmp_path / "store.db"
    argv = [sys.executable, "-m", "ioh_tui", "exec", "wait", "--workspace", str(project)]
    argv += ["--provider", "scripted", "--scenario", str(scenario), "--store", str(store)]
    argv += ["--on-approval", "approve", "--sandbox", "floor", "--json"]
    driver = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert driver.stdout is not None
        for line in driver.stdout:
            if json.loads(line)["event"] == "tool_call_started":
                break
        time.sleep(0.5)
    finally:
        driver.kill()
        driver.wait()
    [run] = _listed(store)
    done = ioh("resume", str(run["run_id"]), "--headless", "--store", str(store))
    assert done.returncode == 4, done.stderr
    asked = [line for line in done.stderr.splitlines() if line.startswith("  approval ")]
    why = "exec sleep 30 (cut by a crash, it may have run in part: it runs again only if approved)"
    assert asked[-1].endswith(why), done.stderr
    # The queue of pending decisions says it too.
    (pending,) = ioh("approvals", "--store", str(store)).stdout.splitlines()
    assert f": {why}  (wait)" in pending


def test_sub_agents_are_running_while_their_root_is_and_crashed_once_it_died(
    tmp_path: Path,
) -> None:
    spawn = {"name": "spawn_agent", "arguments": {"goal": "survey", "max_steps": 3}}
    child = {"turns": [{"text": "slow", "delay_ms": 60_000}]}
    scenario = tmp_path / "s.json"
    scenario.write_text(
        json.dumps({"model": "m", "turns": [{"tool_calls": [spawn]}], "agents": {"survey": child}})
    )
    store = tmp_path / "store.db"
    (tmp_path / "ws").mkdir()
    argv = [sys.executable, "-m", "ioh_tui", "exec", "split", "--workspace", str(tmp_path / "ws")]
    argv += ["--provider", "scripted", "--scenario", str(scenario), "--store", str(store)]
    driver = subprocess.Popen(
        [*argv, "--max-agents", "2"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 30
        while not (store.exists() and len(_listed(store)) == 2):
            assert time.monotonic() < deadline, "the child never started"
            time.sleep(0.1)
        # Only the root holds a lease: its live child is running, not crashed.
        assert [r["state"] for r in _listed(store)] == ["running", "running"]
    finally:
        driver.kill()
        driver.wait()
    trace = json.loads(ioh("show", "1", "--json", "--store", str(store)).stdout)
    [sub] = trace["sub_agents"]
    assert (sub["status"], sub["state"]) == ("running", "crashed")
    shown = ioh("show", "1", "--store", str(store)).stdout.splitlines()
    assert shown[-1] == f"sub-agent {sub['id']}: survey -> crashed"


def test_headless_progress_names_the_rule_that_asked(tmp_path: Path) -> None:
    policy = tmp_path / "p.toml"
    policy.write_text(
        '[[policy.layers]]\nname = "team"\nrules = [{act = "write", effect = "ask", '
        'pattern = "*.txt"}]\n'
    )
    write = {"name": "write_file", "arguments": {"path": "a.txt", "content": "x"}}
    scenario = write_scenario(tmp_path / "s.json", {"tool_calls": [write]}, {"text": "done"})
    (tmp_path / "ws").mkdir()
    done = ioh(
        *("exec", "w", "--workspace", str(tmp_path / "ws"), "--provider", "scripted"),
        *("--scenario", str(scenario), "--store", str(tmp_path / "s.db")),
        *("--policy", str(policy), "--on-approval", "deny"),
    )
    asked = [line for line in done.stderr.splitlines() if line.startswith("  approval 1: ")]
    assert asked == ["  approval 1: write a.txt (rule *.txt, layer team)", "  approval 1: deny"]

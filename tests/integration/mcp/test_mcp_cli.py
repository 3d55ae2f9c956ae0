"""MCP servers from the command line: configured, asked about, deferred, killed, listed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.integration.mcp.servers import (
    config_toml,
    gone,
    http_server,
    marker,
    processes_with,
)


def configure(text: str) -> None:
    """Write the user configuration file the suite points XDG_CONFIG_HOME at."""
    folder = Path(os.environ["XDG_CONFIG_HOME"]) / "ioh-tui"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.toml").write_text(text)


def ioh(*args: str, timeout: float = 90) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ioh_tui", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def scenario(path: Path, *turns: dict[str, Any]) -> str:
    path.write_text(json.dumps({"model": "m", "turns": list(turns)}))
    return str(path)


@pytest.mark.parametrize(
    ("name", "arguments", "target", "output"),
    [
        ("mcp__fx__where", {}, "fx/where", "FIXTURE_VAR=from-config"),
        (
            "mcp_read_resource",
            {"server": "fx", "uri": "memo://note"},
            "fx/memo://note",
            "[resource memo://note]\na note",
        ),
    ],
)
def test_an_ask_is_deferred_then_approved_with_resume(
    project: Path, tmp_path: Path, name: str, arguments: dict[str, str], target: str, output: str
) -> None:
    tag = marker()
    configure(config_toml("fx", tag, resources=True))
    script = scenario(
        tmp_path / "s.json",
        {"tool_calls": [{"name": name, "arguments": arguments}]},
        {"text": "done"},
    )
    store = str(tmp_path / "runs.db")
    common = ("--store", store, "--workspace", str(project))
    first = ioh(
        *("exec", "look around", "--provider", "scripted", "--scenario", script),
        *(*common, "--on-approval", "defer", "--json"),
    )
    assert first.returncode == 4, first.stderr  # paused on the decision
    events = [json.loads(line) for line in first.stdout.splitlines()]
    (asked,) = [e for e in events if e["event"] == "approval_requested"]
    assert (asked["act"], asked["target"]) == ("mcp", target)
    assert gone(tag), "the server outlived the paused run"
    done = ioh("resume", "1", "--headless", "--decide", "approve", *common, "--json")
    assert done.returncode == 0, done.stderr
    finished = [json.loads(line) for line in done.stdout.splitlines()]
    (result,) = [e for e in finished if e["event"] == "tool_call_finished"]
    assert result["ok"] and output in result["output"]
    assert finished[-1]["outcome"] == "finished"
    assert gone(tag)
    shown = json.loads(ioh("show", "1", "--json", "--store", store).stdout)
    kinds = {e["kind"] for e in shown["sandbox_events"]}
    assert "mcp_ready" in kinds


def allowing_fx(tmp_path: Path) -> tuple[str, ...]:
    """`--policy` options allowing every tool of server `fx` (no ask before the call)."""
    policy = tmp_path / "p.toml"
    policy.write_text(
        '[[policy.layers]]\nname = "t"\nrules = [{act = "mcp", effect = "allow", '
        'pattern = "fx/*"}]\n'
    )
    return ("--policy", str(policy))


def killed_mid_call(tag: str, script: str, *options: str) -> None:
    """`exec` with `options`, SIGKILLed once the scripted call is under way on the server."""
    harness = subprocess.Popen(
        [
            *(sys.executable, "-m", "ioh_tui", "exec", "wait", "--provider", "scripted"),
            *("--scenario", script, *options, "--json"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert harness.stdout is not None
        for line in harness.stdout:  # until the call is under way
            if json.loads(line)["event"] == "tool_call_started":
                break
        deadline = time.monotonic() + 20
        while not processes_with(tag) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert processes_with(tag), "the server never started"
        time.sleep(0.5)
    finally:
        harness.send_signal(signal.SIGKILL)
        harness.wait(10)


@pytest.mark.slow
def test_no_server_is_left_after_the_harness_is_killed(project: Path, tmp_path: Path) -> None:
    tag = marker()
    configure(config_toml("fx", tag))
    script = scenario(
        tmp_path / "s.json",
        {"tool_calls": [{"name": "mcp__fx__wait", "arguments": {"seconds": 60}}]},
        {"text": "done"},
    )
    store = ("--store", str(tmp_path / "runs.db"))
    killed_mid_call(tag, script, *allowing_fx(tmp_path), "--workspace", str(project), *store)
    assert gone(tag, within_s=10), [p.cmdline() for p in processes_with(tag)]


def test_mcp_list_shows_each_server_its_tools_or_its_error(tmp_path: Path) -> None:
    tag = marker()
    configure(
        config_toml("fx", tag)
        + '\n[mcp.servers.broken]\ncommand = "/nonexistent/server"\n\n'
        + config_toml("notes", tag, resources=True)
    )
    shown = ioh("mcp", "list", "--workspace", str(tmp_path))
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[0] == "broken  stdio  failed  /nonexistent/server"
    assert "command not found" in lines[1]
    assert lines[2].startswith("fx  stdio  10 tools  ")
    assert "echo" in lines[3] and "where" in lines[3]
    assert lines[4].startswith("notes  stdio  11 tools, 4 resources  ")
    assert lines[6] == (
        "  resources: memo://note, memo://pixel, memo://blob, memo://notes/{name} (template)"
    )
    as_json = json.loads(ioh("mcp", "list", "--json", "--workspace", str(tmp_path)).stdout)
    rows = {row["name"]: row for row in as_json["servers"]}
    assert rows["fx"]["state"] == "ready" and "crash" in rows["fx"]["tools"]
    assert rows["fx"]["resources"] == []
    assert rows["notes"]["resources"][0] == {
        "uri": "memo://note",
        "name": "note",
        "description": "A short note.",
        "mime_type": "text/plain",
        "template": False,
    }
    assert rows["broken"]["state"] == "failed" and rows["broken"]["tools"] == []
    assert gone(tag)


def test_a_configured_sse_server_is_spoken_to_over_sse(tmp_path: Path) -> None:
    with http_server("sse") as url:
        configure(f'[mcp.servers.old]\nurl = "{url}"\ntransport = "sse"\n')
        shown = ioh("mcp", "list", "--workspace", str(tmp_path))
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.splitlines()[0] == f"old  sse  10 tools  {url}"


def test_mcp_list_with_a_bad_configuration_is_one_line_and_exit_2(tmp_path: Path) -> None:
    configure('[mcp.servers.x]\ncommand = "a"\nurl = "http://127.0.0.1:1/mcp"\n')
    shown = ioh("mcp", "list")
    assert shown.returncode == 2
    assert len(shown.stderr.splitlines()) == 1
    assert "needs exactly one of command" in shown.stderr
    configure('[mcp.servers."a__b"]\ncommand = "a"\n')
    shown = ioh("mcp", "list")
    assert shown.returncode == 2 and "a server name is at most 32" in shown.stderr


def test_without_the_extra_a_configured_server_says_how_to_install_it(
    project: Path, tmp_path: Path
) -> None:
    configure(config_toml("fx", marker()))
    hint = "MCP servers need the mcp extra: pip install 'ioh-tui[mcp]'"

    def without_sdk(*argv: str) -> subprocess.CompletedProcess[str]:
        code = (
            "import sys; sys.modules['mcp'] = None; from ioh_tui.cli import main; "
            f"sys.exit(main({list(argv)!r}))"
        )
        return subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=60
        )

    listed = without_sdk("mcp", "list")
    assert listed.returncode == 2
    assert listed.stderr.strip() == f"ioh-tui: {hint}"
    script = scenario(tmp_path / "s.json", {"text": "nothing to do"})
    ran = without_sdk(
        *("exec", "x", "--provider", "scripted", "--scenario", script),
        *("--workspace", str(project), "--store", str(tmp_path / "r.db")),
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stderr.splitlines()[0] == f"ioh-tui: {hint} (the run goes on without its servers)"


def test_the_base_install_never_imports_the_sdk() -> None:
    code = (
        "import sys; import ioh_tui.cli, ioh_tui.cli.headless, ioh_tui.engine, ioh_tui.mcp; "
        "from ioh_tui.cli import main; print('mcp' in sys.modules, 'mcp_types' in sys.modules)"
    )
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert shown.stdout.strip() == "False False", shown.stderr


@pytest.mark.slow
def test_a_call_the_harness_s_crash_cut_is_the_operator_s_to_make_again(
    project: Path, tmp_path: Path
) -> None:
    # Its effect on the server cannot be known: resumed, the run asks (never repeats it alone),
    # on the act the call decides, so an approval makes exactly that call.
    tag = marker()
    configure(config_toml("fx", tag))
    wait = {"name": "mcp__fx__wait", "arguments": {"seconds": 2}}
    script = scenario(tmp_path / "s.json", {"tool_calls": [wait]}, {"text": "done"})
    store = str(tmp_path / "runs.db")
    common = ("--store", store, "--workspace", str(project), *allowing_fx(tmp_path))
    killed_mid_call(tag, script, *common)
    resumed = ioh("resume", "1", "--headless", *common, "--on-approval", "approve", "--json")
    assert resumed.returncode == 4, resumed.stderr  # --on-approval does not answer it
    events = [json.loads(line) for line in resumed.stdout.splitlines()]
    (asked,) = [e for e in events if e["event"] == "approval_requested"]
    assert (asked["act"], asked["target"], asked["rule"], asked["layer"]) == (
        "mcp",
        "fx/wait",
        "interrupted",
        "recovery",
    )
    assert json.loads(asked["content"]) == {"seconds": 2}
    assert not [e for e in events if e["event"] == "tool_call_finished"]
    done = ioh("resume", "1", "--headless", "--decide", "approve", *common, "--json")
    assert done.returncode == 0, done.stderr
    finished = [json.loads(line) for line in done.stdout.splitlines()]
    (made,) = [e for e in finished if e["event"] == "tool_call_finished"]
    assert made["ok"] and made["name"] == "mcp__fx__wait", made
    assert not [e for e in finished if e["event"] == "approval_requested"]
    assert finished[-1]["outcome"] == "finished"
    assert gone(tag)

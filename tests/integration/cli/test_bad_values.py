"""Values that cannot bound or describe a run are refused on one line, exit 2 (issue 18, item 14).

NaN and the infinities (Python's json and TOML both read them; a budget of NaN is never reached and
`delay_ms: Infinity` hangs), caps of zero, an empty gate command, an exit status no process can
have, a `--file` outside the workspace, a scenario that is not UTF-8 or is nested past any
parser's depth, and a sandbox rung asked for by name that this machine lacks. Nothing is started:
no store is written.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from ioh_tui.cli import main
from tests.integration.cli.test_exec import ioh, write_scenario

FLAGS: dict[str, tuple[list[str], str]] = {
    "time budget nan": (["--time-budget", "nan"], "must be a positive finite number, not 'nan'"),
    "time budget inf": (["--time-budget", "inf"], "must be a positive finite number, not 'inf'"),
    "token budget inf": (["--token-budget", "inf"], "must be a positive integer, not 'inf'"),
    "max steps 0": (["--max-steps", "0"], "must be a positive integer, not 0"),
    "empty verify-cmd": (["--verify-cmd", ""], "--verify-cmd is empty"),
    "blank verify-cmd": (["--verify-cmd", "  \t "], "--verify-cmd is empty"),
    "expect-exit 999": (
        ["--verify-cmd", "true", "--expect-exit", "999"],
        "must be an exit status (0-255), not 999",
    ),
    "expect-exit -1": (
        ["--verify-cmd", "true", "--expect-exit", "-1"],
        "must be an exit status (0-255), not -1",
    ),
    "file outside": (
        ["--file", "/etc/hostname"],
        "file /etc/hostname is not inside the workspace",
    ),
    "file above": (["--file", "../notes.txt"], "--file ../notes.txt is not inside the workspace"),
}

CONTRACTS: dict[str, tuple[str, str]] = {
    "max_steps = 0": (
        "[budgets]\nmax_steps = 0",
        "budgets.max_steps must be an integer > 0, not 0",
    ),
    "exec_timeout_s = 0": (
        "[budgets]\nexec_timeout_s = 0",
        "budgets.exec_timeout_s must be a finite number > 0, not 0",
    ),
    "time_budget_s = nan": (
        "[budgets]\ntime_budget_s = nan",
        "budgets.time_budget_s must be a finite number > 0, not nan",
    ),
    "time_budget_s = inf": (
        "[budgets]\ntime_budget_s = inf",
        "budgets.time_budget_s must be a finite number > 0, not inf",
    ),
    "token_budget = inf": (
        "[budgets]\ntoken_budget = inf",
        "budgets.token_budget must be an integer > 0, not inf",
    ),
    "max_steps = 2.5": (
        "[budgets]\nmax_steps = 2.5",
        "budgets.max_steps must be an integer > 0, not 2.5",
    ),
    "stall_after = -inf": (
        "[budgets]\nstall_after = -inf",
        "budgets.stall_after must be an integer >= 0, not -inf",
    ),
    "expect_exit = 999": (
        '[verification]\nargv = ["true"]\nexpect_exit = 999',
        "expect_exit must be an exit status (0-255), not 999",
    ),
    "file outside": (
        'file = "/etc/hostname"',
        "file /etc/hostname is not inside the workspace",
    ),
}


def _nested(depth: int) -> str:
    agents = "".join(',"agents":{"x":{"turns":[]' for _ in range(depth))
    return '{"turns":[]' + agents + "}}" * depth + "}"


SCENARIOS: dict[str, tuple[bytes, str]] = {
    "delay Infinity": (
        b'{"turns": [{"text": "hi", "delay_ms": Infinity}]}',
        "Infinity is not a finite number",
    ),
    "delay NaN": (b'{"turns": [{"text": "hi", "delay_ms": NaN}]}', "NaN is not a finite number"),
    "delay 1e999": (
        b'{"turns": [{"text": "hi", "chunk_delay_ms": 1e999}]}',
        "1e999 is not a finite number",
    ),
    "retry -Infinity": (
        b'{"turns": [{"errors": [{"status": 503, "retry_after_s": -Infinity}]}]}',
        "-Infinity is not a finite number",
    ),
    "delay 10**400": (
        b'{"turns": [{"text": "hi", "delay_ms": 1' + b"0" * 400 + b"}]}",
        "delay_ms must be a number >= 0",
    ),
    "not UTF-8": (b'{"turns": [{"text": "caf\xe9"}]}', "is not UTF-8 text"),
    "100,000 deep": (b"[" * 100_000 + b"]" * 100_000, "is nested too deeply"),
    "agents 3,000 deep": (_nested(3000).encode(), "nested too deeply"),
}


FILES: dict[str, tuple[str, bytes, str]] = {
    "contract not UTF-8": ("--contract", b'goal = "caf\xe9"\n', "is not UTF-8 text"),
    "contract 100,000 deep": (
        "--contract",
        b'goal = "g"\nx = ' + b"[" * 100_000 + b"]" * 100_000 + b"\n",
        "is nested too deeply",
    ),
    "policy 100,000 deep": (
        "--policy",
        b"policy = " + b"[" * 100_000 + b"]" * 100_000 + b"\n",
        "policy TOML: nested too deeply",
    ),
    "policy not UTF-8": ("--policy", b'policy.defaults.read = "\xff"\n', "not UTF-8"),
}


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "notes.txt").write_text("notes\n")
    return root


def _refused(argv: list[str], capsys: pytest.CaptureFixture[str], *said: str) -> None:
    status: object
    try:
        status = main(argv)
    except SystemExit as exit_:  # argparse's own refusals exit from inside `main`
        status = exit_.code
    out, err = capsys.readouterr()
    assert status == 2, err
    assert out == ""
    assert err.count("\n") == 1 and all(part in err for part in said), err


@pytest.mark.parametrize("case", sorted(FLAGS))
def test_a_flag_that_cannot_bound_the_run_is_refused(
    case: str, workspace: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    flags, message = FLAGS[case]
    scenario = write_scenario(tmp_path / "s.json", {"text": "hi"})
    store = tmp_path / "store.db"
    base = ["--workspace", str(workspace), "--scenario", str(scenario), "--store", str(store)]
    _refused(["exec", "goal", *base, *flags], capsys, message)
    assert not store.exists()  # nothing was started


@pytest.mark.parametrize("case", sorted(CONTRACTS))
def test_a_contract_value_that_cannot_bound_the_run_is_refused(
    case: str, workspace: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body, message = CONTRACTS[case]
    contract = tmp_path / "c.toml"
    contract.write_text(f'goal = "fix it"\nworkspace = "ws"\n{body}\n')
    scenario = write_scenario(tmp_path / "s.json", {"text": "hi"})
    store = tmp_path / "store.db"
    argv = ["exec", "", "--contract", str(contract), "--scenario", str(scenario)]
    _refused([*argv, "--store", str(store)], capsys, message, f"contract {contract}")
    assert not store.exists()


@pytest.mark.parametrize("case", sorted(FILES))
def test_a_contract_or_policy_file_that_cannot_be_read_is_refused(
    case: str, workspace: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    option, data, message = FILES[case]
    given = tmp_path / "given.toml"
    given.write_bytes(data)
    scenario = write_scenario(tmp_path / "s.json", {"text": "hi"})
    store = tmp_path / "store.db"
    argv = ["exec", "goal", "--workspace", str(workspace), "--scenario", str(scenario)]
    _refused([*argv, option, str(given), "--store", str(store)], capsys, message, str(given))
    assert not store.exists()


@pytest.mark.parametrize("case", sorted(SCENARIOS))
def test_a_scenario_that_cannot_be_played_is_refused(
    case: str, workspace: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data, message = SCENARIOS[case]
    scenario = tmp_path / "s.json"
    scenario.write_bytes(data)
    store = tmp_path / "store.db"
    argv = ["exec", "goal", "--workspace", str(workspace), "--scenario", str(scenario)]
    _refused([*argv, "--store", str(store)], capsys, message, str(scenario))
    assert not store.exists()


def test_a_file_given_by_its_absolute_path_inside_the_workspace_is_kept_relative(
    workspace: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario = write_scenario(tmp_path / "s.json", {"text": "Nothing to change."})
    store = tmp_path / "store.db"
    argv = ["exec", "goal", "--workspace", str(workspace), "--scenario", str(scenario)]
    argv += ["--file", str(workspace / "notes.txt"), "--store", str(store), "--sandbox", "floor"]
    assert main(argv) == 0
    capsys.readouterr()
    assert main(["show", "1", "--json", "--store", str(store)]) == 0
    run = json.loads(capsys.readouterr().out)["run"]
    assert (run["mode"], run["subject"]) == ("single_file", "notes.txt")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("rung", "missing"), [("bwrap", "bubblewrap (bwrap) not found"), ("namespaces", "unshare")]
)
def test_a_sandbox_asked_for_by_name_and_missing_here_is_exit_2(
    rung: str, missing: str, workspace: Path, tmp_path: Path
) -> None:
    scenario = write_scenario(tmp_path / "s.json", {"text": "hi"})
    # The probe finds bubblewrap and util-linux `unshare` on PATH: a PATH without them is a
    # machine without them.
    env = {k: v for k, v in os.environ.items() if k != "IOH_TUI_BWRAP"}
    env["PATH"] = str(tmp_path / "empty-bin")
    store = tmp_path / "store.db"
    done = ioh(
        "exec",
        "goal",
        "--workspace",
        str(workspace),
        "--scenario",
        str(scenario),
        "--store",
        str(store),
        "--sandbox",
        rung,
        env=env,
    )
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1, done.stderr
    assert f"sandbox {rung!r} is not available here" in done.stderr and missing in done.stderr
    assert not store.exists()


@pytest.mark.slow
def test_a_real_process_refuses_a_nan_budget_and_a_deep_scenario_without_a_traceback(
    workspace: Path, tmp_path: Path
) -> None:
    scenario = tmp_path / "deep.json"
    scenario.write_bytes(SCENARIOS["100,000 deep"][0])
    for argv, message in (
        (["--time-budget", "nan", "--scenario", str(scenario)], "--time-budget"),
        (["--scenario", str(scenario)], "is nested too deeply"),
    ):
        done = ioh("exec", "goal", "--workspace", str(workspace), *argv, cwd=tmp_path)
        assert done.returncode == 2 and message in done.stderr, done.stderr
        assert done.stderr.count("\n") == 1 and sys.executable not in done.stderr

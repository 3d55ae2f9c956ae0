"""`ioh-tui config`, configuration files under real runs, gate caps and keys named by variable."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sqlite3
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from ioh_tui.cli import main
from ioh_tui.providers.testing.fake_http import HttpRequest, Responder
from ioh_tui.providers.testing.fake_server import FakeModelServer, RecordedRequest
from tests.fakes.provider_server import scenario
from tests.integration.cli.test_exec import FIX, write_scenario
from tests.integration.cli.test_exec import ioh as exec_ioh

KEY = "sk-test-Abc123Def456Ghi789Jkl0"


def ioh(
    *args: str, cwd: Path, extra_env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """The command line, with this test's environment (its private config and data dirs)."""
    return exec_ioh(*args, cwd=cwd, env={**os.environ, **(extra_env or {})})


def user_config(text: str) -> Path:
    path = Path(os.environ["XDG_CONFIG_HOME"]) / "ioh-tui" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def project_config(workspace: Path, text: str) -> Path:
    path = workspace / ".ioh-tui" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_config_shows_each_value_with_its_source(tmp_path: Path, project: Path) -> None:
    user = user_config(
        '[provider]\nname = "openai"\nmodel = "u-model"\n\n[budgets]\nmax_steps = 7\n'
    )
    proj = project_config(project, "[budgets]\nmax_steps = 9\ntoken_budget = 500\n")
    done = ioh(
        "config",
        "--gate-timeout",
        "300",
        cwd=project,
        extra_env={"IOH_TUI_BUDGETS_TOKEN_BUDGET": "800"},
    )
    assert done.returncode == 0, done.stderr
    lines = {line.split()[0]: line for line in done.stdout.splitlines()}
    assert lines["provider.name"].endswith(f'"openai"  (user {user}:2)')
    assert lines["provider.model"].endswith(f'"u-model"  (user {user}:3)')
    assert lines["budgets.max_steps"].endswith(f"9  (project {proj}:2)")
    assert lines["budgets.token_budget"].endswith("800  (env IOH_TUI_BUDGETS_TOKEN_BUDGET)")
    assert lines["gate.timeout_s"].endswith("300.0  (flag --gate-timeout)")
    assert lines["gate.cpu_s"].endswith("60.0  (default)")

    as_json = json.loads(ioh("config", "--json", cwd=project).stdout)
    assert as_json["values"]["budgets.max_steps"] == {
        "value": 9,
        "source": f"project {proj}:2",
    }
    paths = ioh("config", "path", cwd=project).stdout.splitlines()
    assert paths == [f"user     {user}  (exists)", f"project  {proj}  (exists)"]


def test_config_path_says_which_files_are_missing(tmp_path: Path) -> None:
    done = ioh("config", "path", "--json", cwd=tmp_path)
    files = json.loads(done.stdout)["files"]
    assert [(f["scope"], f["exists"]) for f in files] == [("user", False), ("project", False)]
    assert files[1]["path"] == str(tmp_path.resolve() / ".ioh-tui" / "config.toml")


def test_api_key_env_prints_the_name_and_whether_it_is_set_never_the_value(
    tmp_path: Path,
) -> None:
    user_config('[provider]\napi_key_env = "MY_KEY"\n')
    done = ioh("config", cwd=tmp_path, extra_env={"MY_KEY": KEY})
    assert "MY_KEY (set)" in done.stdout
    assert KEY not in done.stdout + done.stderr
    assert "MY_KEY (not set)" in ioh("config", cwd=tmp_path).stdout


@pytest.mark.parametrize(
    "command", [("config",), ("runs",), ("exec", "goal", "--provider", "scripted")]
)
def test_a_bad_file_is_one_line_naming_file_line_and_key(
    tmp_path: Path, project: Path, command: tuple[str, ...]
) -> None:
    path = project_config(project, "[budgets]\nmax_steps = 5\n\n[gate]\ntimeout_s = -3\n")
    done = ioh(*command, cwd=project)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.splitlines() == [
        f"ioh-tui: {path}:5: gate.timeout_s: must be a number of seconds > 0, not -3"
    ]


def test_a_project_file_naming_a_key_value_is_refused(project: Path) -> None:
    path = project_config(project, f'[provider]\nname = "openai"\napi_key = "{KEY}"\n')
    done = ioh("exec", "goal", "--scenario", "x.json", cwd=project)
    assert done.returncode == 2
    assert done.stderr.startswith(f"ioh-tui: {path}:3: provider.api_key: a key's value is never")
    assert KEY not in done.stderr


def test_exec_takes_its_budgets_and_provider_from_the_files(tmp_path: Path, project: Path) -> None:
    """The user file names the provider, the project file a budget; a flag still wins."""
    script = write_scenario(tmp_path / "s.json", *FIX)
    user_config('[provider]\nname = "scripted"\n\n[budgets]\nmax_steps = 1\n')
    project_config(project, "[budgets]\nmax_steps = 2\n")
    done = ioh("exec", "fix add", "--scenario", str(script), "--json", cwd=project)
    started = json.loads(done.stdout.splitlines()[0])
    assert started["budgets"]["max_steps"] == 2
    assert json.loads(done.stdout.splitlines()[-1])["outcome"] == "step_cap_reached"
    flagged = ioh(
        "exec", "fix add", "--scenario", str(script), "--json", "--max-steps", "6", cwd=project
    )
    assert json.loads(flagged.stdout.splitlines()[0])["budgets"]["max_steps"] == 6


def test_a_profile_chooses_the_provider(tmp_path: Path, project: Path) -> None:
    script = write_scenario(tmp_path / "s.json", *FIX)
    user_config('[provider]\nname = "openai"\n\n[profiles.offline]\nname = "scripted"\n')
    without = ioh("exec", "fix add", cwd=project)
    assert without.returncode == 2
    assert without.stderr.strip() == "ioh-tui: OPENAI_API_KEY is not set"
    done = ioh(
        "exec",
        "fix add",
        "--profile",
        "offline",
        "--scenario",
        str(script),
        "--verify-cmd",
        "python3 check_calc.py",
        "--on-approval",
        "approve",
        cwd=project,
    )
    assert done.returncode == 0, done.stderr
    unknown = ioh("exec", "fix add", "--profile", "nope", cwd=project)
    assert unknown.returncode == 2
    assert unknown.stderr.strip() == (
        "ioh-tui: --profile nope: no [profiles.nope] in the configuration files (defined: offline)"
    )


# -- gate caps ---------------------------------------------------------------------------------


SLEEPY = "import time; time.sleep(4)"


@pytest.mark.slow
def test_gate_timeout_reaches_the_sandbox(tmp_path: Path, project: Path) -> None:
    """A 4 s gate is killed under --gate-timeout 2 and passes under 8 (and is kept on resume)."""
    script = write_scenario(tmp_path / "s.json", {"text": "done"})
    store = tmp_path / "runs.db"
    common = [
        "exec",
        "wait",
        "--scenario",
        str(script),
        "--verify-cmd",
        f'python3 -c "{SLEEPY}"',
        "--store",
        str(store),
        "--max-steps",
        "1",
    ]
    killed = ioh(*common, "--gate-timeout", "2", cwd=project)
    assert "killed at its wall cap" in killed.stderr + killed.stdout
    assert killed.returncode != 0
    passed = ioh(*common, "--gate-timeout", "8", cwd=project)
    assert passed.returncode == 0, passed.stderr
    shown = ioh("show", "2", "--store", str(store), cwd=project)
    assert "gate caps: 8.0 s wall clock, 60 s CPU, 2048 MB memory" in shown.stdout
    stored = json.loads(
        sqlite3.connect(store).execute("select contract from runs where id = 2").fetchone()[0]
    )
    assert stored["gate"] == {"timeout_s": 8.0, "cpu_s": 60, "memory_mb": 2048}


@pytest.mark.slow
def test_gate_caps_from_the_config_and_the_contract(tmp_path: Path, project: Path) -> None:
    """A contract's [gate] beats the project file's; a flag beats both."""
    script = write_scenario(tmp_path / "s.json", {"text": "done"})
    project_config(project, "[gate]\ntimeout_s = 8\n")
    contract = tmp_path / "c.toml"
    contract.write_text(
        f'goal = "wait"\nworkspace = "{project}"\n\n'
        f'[verification]\nargv = ["python3", "-c", "{SLEEPY}"]\n\n[gate]\ntimeout_s = 2\n'
    )
    base = ["exec", "--scenario", str(script), "--max-steps", "1"]
    from_config = ioh(*base, "wait", "--verify-cmd", f'python3 -c "{SLEEPY}"', cwd=project)
    assert from_config.returncode == 0, from_config.stderr
    from_contract = ioh(*base, "wait", "--contract", str(contract), cwd=project)
    assert "killed at its wall cap" in from_contract.stderr
    flagged = ioh(*base, "wait", "--contract", str(contract), "--gate-timeout", "8", cwd=project)
    assert flagged.returncode == 0, flagged.stderr


# -- keys named by variable --------------------------------------------------------------------


class KeyedServer(FakeModelServer):
    """The fake model server behind a key: a request without `Bearer KEY` is answered 401."""

    def __init__(self, key: str, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._key = key
        self.accepted = 0
        self.refused = 0

    async def _respond(self, http: HttpRequest, writer: asyncio.StreamWriter) -> bool:
        if http.headers.get("authorization") == f"Bearer {self._key}":
            self.accepted += 1
            return await super()._respond(http, writer)
        self.refused += 1
        out = Responder(writer, chunked=True, keep_alive=False)
        record = RecordedRequest(http.method, http.target, {}, None)
        self.requests.append(record)
        return await self._refuse(out, record, 401, "invalid api key")


@contextlib.contextmanager
def keyed_server(key: str) -> Iterator[KeyedServer]:
    server = KeyedServer(key, scenario(*FIX), wire="openai")
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    stop = asyncio.Event()

    async def main() -> None:
        async with server:
            ready.set()
            await stop.wait()

    thread = threading.Thread(target=loop.run_until_complete, args=(main(),), daemon=True)
    thread.start()
    assert ready.wait(10)
    try:
        yield server
    finally:
        loop.call_soon_threadsafe(stop.set)
        thread.join(10)
        loop.close()


def _keyed_exec(server: KeyedServer) -> list[str]:
    """`exec` fixing the project through the keyed server (the key's variable not yet named)."""
    return [
        "exec",
        "fix add",
        "--provider",
        "compatible",
        "--base-url",
        server.base_url,
        "--model",
        "fake-model",
        "--on-approval",
        "approve",
    ]


def test_api_key_env_reaches_a_keyed_server_and_never_the_store(
    tmp_path: Path, project: Path
) -> None:
    """The key reaches the server and nowhere else; the [pricing] file prices the model too."""
    store = tmp_path / "runs.db"
    prices = tmp_path / "conf-prices.toml"
    prices.write_text('[models."fake-model"]\ninput = 1000000.0\noutput = 0.0\n')
    user_config(f'[pricing]\nfile = "{prices}"\n')
    with keyed_server(KEY) as server:
        common = [
            *_keyed_exec(server),
            "--verify-cmd",
            "python3 check_calc.py",
            "--max-retries",
            "0",
            "--store",
            str(store),
        ]
        wrong = ioh(*common, "--api-key-env", "MY_KEY", cwd=project, extra_env={"MY_KEY": "nope"})
        assert wrong.returncode == 1
        assert server.refused >= 1 and server.accepted == 0
        done = ioh(
            *common,
            "--api-key-env",
            "MY_KEY",
            "--json",
            cwd=project,
            extra_env={"MY_KEY": KEY},
        )
        assert done.returncode == 0, done.stderr
        assert server.accepted >= 2
        usage = [json.loads(line) for line in done.stdout.splitlines() if '"usage"' in line]
        # A million dollars per million input tokens: the cost is the input token count.
        assert usage
        assert all(u["cost_usd"] == pytest.approx(u["input_tokens"]) for u in usage)
        unset = ioh(*common, "--api-key-env", "UNSET_KEY", cwd=project)
        assert unset.returncode == 2
        assert unset.stderr.strip() == (
            "ioh-tui: UNSET_KEY is not set (named by api_key_env, flag --api-key-env)"
        )
    assert (project / "calc.py").read_text().count("a + b") == 1
    for run in (wrong, done, unset):
        assert KEY not in run.stdout + run.stderr
    dump = "\n".join(sqlite3.connect(store).iterdump())
    assert KEY not in dump
    # The variable's name is kept with the run (resume finds the key again), never its value.
    assert '"api_key_env": "MY_KEY"' in dump


REMOTE = "https://models.example/v1"
"""A project's endpoint off this machine (never reached: the suite's kill switch refuses it)."""


def test_a_projects_remote_endpoint_gets_no_key_until_agreed_to(
    tmp_path: Path,
    project: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A cloned project naming a server of its own and another variable: left out, shown."""
    other = "sk-other-Zyx987Wvu654Tsr321Qpo0"
    monkeypatch.setenv("MY_KEY", KEY)
    monkeypatch.setenv("OTHER_SECRET", other)
    fix = ["exec", "fix add", "--on-approval", "approve", "--max-retries", "0", "--json"]
    with keyed_server(KEY) as mine:
        user_config(
            f'[provider]\nname = "compatible"\nbase_url = "{mine.base_url}"\n'
            'model = "fake-model"\napi_key_env = "MY_KEY"\n'
        )
        path = project_config(
            project, f'[provider]\nbase_url = "{REMOTE}"\napi_key_env = "OTHER_SECRET"\n'
        )
        done = ioh(*fix, "--store", str(tmp_path / "a.db"), cwd=project)
        assert done.returncode == 0, done.stderr
        assert mine.accepted >= 2  # the user's server, with the user's key
    (line,) = [line for line in done.stderr.splitlines() if "left out" in line]
    assert str(path) in line and "base_url and api_key_env" in line
    assert "your key" in line and "--trust-project" in line
    # `config` keeps the files' precedence and marks what a run leaves out.
    shown = json.loads(ioh("config", "--json", cwd=project).stdout)
    assert shown["left_out"] == [{"section": "provider", "file": str(path)}]
    assert shown["values"]["provider.base_url"] == {
        "value": REMOTE,
        "source": f"project {path}:2",
        "left_out": True,
    }
    shown_text = ioh("config", cwd=project).stdout
    assert f"(project {path}:2)  left out of runs until agreed" in shown_text
    assert KEY not in done.stdout + done.stderr and other not in done.stdout + done.stderr
    # Agreed to, the run goes to the project's server (refused here: it is not on loopback).
    trusted = [*fix, "--store", str(tmp_path / "b.db"), "--workspace", str(project)]
    assert main([*trusted, "--trust-project"]) == 1
    finished = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert finished["outcome"] == "failed"
    stored = sqlite3.connect(tmp_path / "b.db").execute("SELECT contract, detail FROM runs")
    contract, detail = stored.fetchone()
    assert json.loads(contract)["driver"]["base_url"] == REMOTE
    assert f"remote endpoint {REMOTE}" in detail


def test_a_projects_loopback_endpoint_is_used_unasked(tmp_path: Path, project: Path) -> None:
    """A server on this machine cannot be the project's own without running its code."""
    other = "sk-other-Zyx987Wvu654Tsr321Qpo0"
    with keyed_server(other) as local:
        project_config(
            project,
            f'[provider]\nname = "compatible"\nbase_url = "{local.base_url}"\n'
            'model = "fake-model"\napi_key_env = "OTHER_SECRET"\n',
        )
        fix = ["exec", "fix add", "--on-approval", "approve", "--max-retries", "0"]
        done = ioh(*fix, cwd=project, extra_env={"OTHER_SECRET": other})
        assert done.returncode == 0, done.stderr
        assert local.accepted >= 2
    assert "left out" not in done.stderr


def test_a_provider_needing_the_left_out_endpoint_says_how_to_use_it(project: Path) -> None:
    project_config(
        project,
        f'[provider]\nname = "compatible"\nmodel = "m"\nbase_url = "{REMOTE}"\n',
    )
    done = ioh("exec", "fix add", cwd=project)
    assert done.returncode == 2
    last = done.stderr.splitlines()[-1]
    assert last.startswith("ioh-tui: ") and "--trust-project uses them" in last
    assert "Traceback" not in done.stderr


def test_a_key_on_the_command_line_is_refused(project: Path) -> None:
    done = ioh("exec", "goal", "--api-key-env", KEY, cwd=project)
    assert done.returncode == 2
    assert "looks like a key itself" in done.stderr
    assert KEY not in done.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="only a root harness chooses who commands run as")
def test_the_user_files_root_user_chooses_who_commands_run_as(
    tmp_path: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`[sandbox] root_user` reaches the gate's command; the variable beats the file."""
    monkeypatch.delenv("IOH_TUI_SANDBOX_ROOT_USER", raising=False)
    user_config('[sandbox]\nroot_user = "4321"\n')
    script = write_scenario(tmp_path / "s.json", {"text": "done"})
    check = 'python3 -c "import os, sys; print(os.getuid()); sys.exit(os.getuid() != 4321)"'
    common = ["exec", "wait", "--scenario", str(script), "--verify-cmd", check, "--max-steps", "1"]
    as_configured = ioh(*common, "--store", str(tmp_path / "a.db"), cwd=project)
    assert as_configured.returncode == 0, as_configured.stderr
    overridden = ioh(
        *common,
        "--store",
        str(tmp_path / "b.db"),
        cwd=project,
        extra_env={"IOH_TUI_SANDBOX_ROOT_USER": "auto"},
    )
    # auto: the workspace is root's, so the gate ran as nobody and failed.
    assert overridden.returncode != 0

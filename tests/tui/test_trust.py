"""The trust modal: a project's widening policy is shown whole before `ioh-tui run` starts.

Built as the command line builds it (`cli.in_app.trust_question` over the parsed options), so
what the modal shows and what "use" records are the real ones.
"""

from __future__ import annotations

import json
import sqlite3
import tomllib
from dataclasses import replace
from pathlib import Path

import pytest

from ioh_tui.cli import build_parser
from ioh_tui.cli.in_app import new_app_run, trust_question
from ioh_tui.cli.options import build_contract, build_policy, build_provider
from ioh_tui.config.trust import TrustBook
from ioh_tui.engine import NewRun
from ioh_tui.sandbox import select
from ioh_tui.tui.app import IohApp
from ioh_tui.tui.app_run import AppRun
from ioh_tui.tui.factory import make_app
from ioh_tui.tui.screens.approval import ApprovalModal
from ioh_tui.tui.screens.trust import TrustModal
from tests.fakes.provider_server import scenario
from tests.integration.cli.test_config import (
    KEY,
    REMOTE,
    KeyedServer,
    project_config,
    user_config,
)
from tests.integration.cli.test_exec import write_scenario
from tests.tui.harness import FIX_CALC, FIXED, USAGE, calc_project, finished, until

POLICY = (
    '[[policy.layers]]\nname = "team"\n'
    'rules = [ { act = "write", effect = "allow", pattern = "calc.py" } ]\n'
)


def _app(tmp_path: Path) -> tuple[IohApp, Path]:
    project = calc_project(tmp_path / "project")
    (project / ".ioh-tui").mkdir()
    (project / ".ioh-tui" / "config.toml").write_text(POLICY)
    scenario = write_scenario(tmp_path / "s.json", {"tool_calls": [FIX_CALC], "usage": USAGE})
    args = build_parser().parse_args(
        ["run", "fix add", "--workspace", str(project), "--scenario", str(scenario)]
    )
    contract, contract_policy = build_contract(args)
    run = AppRun(
        NewRun(contract),
        build_provider(args, 0),
        build_policy(args, contract_policy),
        select("floor"),
        label="scripted test model",
    )
    trust = trust_question(args, lambda: replace(run, policy=build_policy(args, contract_policy)))
    assert trust is not None
    app = make_app(tmp_path / "store.db", run, trust=trust)
    app.animation_level = "none"
    return app, project


async def test_use_shows_the_section_records_it_and_the_run_uses_it(tmp_path: Path) -> None:
    app, project = _app(tmp_path)
    async with app.run_test(size=(110, 36)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, TrustModal))
        shown = " ".join(str(w.render()) for w in app.screen.query("Static"))
        assert "[policy]" in shown and str(project / ".ioh-tui" / "config.toml") in shown
        assert '"pattern": "calc.py"' in shown and '"effect": "allow"' in shown
        await pilot.press("u")
        await finished(pilot)
        assert not isinstance(app.screen, ApprovalModal)
    assert (project / "calc.py").read_text() == FIXED  # allowed by the project's rule: no ask
    assert TrustBook().trusted(project, "policy", tomllib.loads(POLICY)["policy"])


async def test_leave_out_runs_without_it_and_asks_again_next_time(tmp_path: Path) -> None:
    app, project = _app(tmp_path)
    async with app.run_test(size=(110, 36)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, TrustModal))
        await pilot.press("l")
        # Without the project's allow, the default tier asks about the write.
        await until(pilot, lambda: isinstance(app.screen, ApprovalModal))
        await pilot.press("n")
        await pilot.press("enter")
        await finished(pilot)
    assert (project / "calc.py").read_text() != FIXED
    assert not TrustBook().trusted(project, "policy", tomllib.loads(POLICY)["policy"])


@pytest.mark.parametrize("answer", ["u", "l"])
async def test_a_projects_remote_endpoint_is_asked_about_and_the_answer_chooses_the_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, answer: str
) -> None:
    """The project points the provider off this machine: the modal says so, the answer counts.

    Used, the run goes to the project's server (refused: the suite's kill switch keeps every
    request on loopback) and keeps that endpoint; left out, the user's server answers.
    """
    monkeypatch.setenv("MY_KEY", KEY)
    mine = KeyedServer(KEY, scenario({"text": "Done."}), wire="openai")
    async with mine:
        user_config(
            f'[provider]\nname = "compatible"\nbase_url = "{mine.base_url}"\n'
            'model = "fake-model"\napi_key_env = "MY_KEY"\n'
        )
        project = calc_project(tmp_path / "project")
        project_config(project, f'[provider]\nbase_url = "{REMOTE}"\n')
        args = build_parser().parse_args(
            ["run", "say done", "--workspace", str(project), "--sandbox", "floor"]
        )
        run, agreed = new_app_run(args)
        trust = trust_question(args, agreed)
        assert trust is not None and [s.kind for s in trust.sections] == ["provider"]
        app = make_app(tmp_path / "store.db", run, trust=trust)
        app.animation_level = "none"
        async with app.run_test(size=(110, 36)) as pilot:
            await until(pilot, lambda: isinstance(app.screen, TrustModal))
            shown = " ".join(str(w.render()) for w in app.screen.query("Static"))
            assert REMOTE in shown and "your key" in shown
            await pilot.press(answer)
            await finished(pilot)
        asked, mine_url = mine.accepted, mine.base_url
    row = sqlite3.connect(tmp_path / "store.db").execute("SELECT contract, outcome FROM runs")
    contract, outcome = row.fetchone()
    if answer == "u":
        assert (asked, outcome) == (0, "failed")
        assert json.loads(contract)["driver"]["base_url"] == REMOTE
    else:
        assert asked >= 1 and outcome == "finished"
        assert json.loads(contract)["driver"]["base_url"] == mine_url
    assert KEY not in contract

"""The built-in demo: a real run against a scripted model, with no key and no network.

It copies a bundled project with a failing test into a fresh temporary workspace, serves the bundled
scenario from a loopback model server over the real OpenAI wire, and talks to it through our own
streaming client. Tools, policy, approvals, sandbox, the test gate and the store are the real
ones. The run's driver names the scenario written beside the workspace, so a resumed demo run (a
deferred decision answered later) continues with the scripted model; the directory is kept while a
decision waits on the run (`ioh_tui.demo.home`).
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from ioh_tui.demo.home import make_home, release
from ioh_tui.engine import Containment, TaskContract
from ioh_tui.policy import Policy
from ioh_tui.providers.base import Provider
from ioh_tui.providers.openai_provider import Compatible
from ioh_tui.providers.testing.fake_server import FakeModelServer
from ioh_tui.providers.testing.scenario import Scenario, parse_scenario
from ioh_tui.sandbox import select
from ioh_tui.sandbox.base import Sandbox
from ioh_tui.verification import Command

HERE = Path(__file__).parent
GOAL = "Make the failing test pass: `add` in calc.py returns the wrong result."
LABEL = "scripted demo model"
CONTAINMENT = Containment(
    max_total_agents=4, max_concurrent=2, max_depth=1, max_total_tokens=50_000
)


@dataclass(frozen=True, slots=True)
class DemoParts:
    """Everything a demo run needs."""

    contract: TaskContract
    provider: Provider
    policy: Policy
    sandbox: Sandbox
    label: str
    workspace: Path
    containment: Containment
    """The demo's agent runs as a small tree (it asks two sub-agents to survey the project)."""
    driver: dict[str, str]
    """The driver options stored with the run: the scripted model on the scenario beside the
    workspace, which a resume rebuilds."""


def scenario_text() -> str:
    """The bundled scenario's JSON, with this interpreter as the project's Python."""
    return (HERE / "scenario.json").read_text(encoding="utf-8").replace("{python}", sys.executable)


def demo_scenario() -> Scenario:
    """The bundled scenario, with this interpreter as the project's Python."""
    return parse_scenario(json.loads(scenario_text()), where="demo scenario")


def demo_policy() -> Policy:
    """The default tiers (writes ask), plus running this project's tests without asking."""
    return (
        Policy.default().layer("demo").allow_exec(sys.executable, f"{sys.executable} -m unittest*")
    )


@asynccontextmanager
async def demo_parts(sandbox: str = "auto") -> AsyncIterator[DemoParts]:
    """Prepare a demo run; the model server and (unless a decision waits) the workspace go after.

    Whoever ends the run calls `ioh_tui.demo.home.settle`: a deferred decision keeps the directory
    (and its scenario) for the resume that answers it.
    """
    home = make_home()
    workspace = home / "workspace"
    try:
        shutil.copytree(HERE / "project", workspace, dirs_exist_ok=True)
        scenario = home / "scenario.json"
        scenario.write_text(scenario_text(), encoding="utf-8")
        driver = {"provider": "scripted", "scenario": str(scenario)}
        async with FakeModelServer(demo_scenario(), wire="openai") as server:
            provider = Compatible(
                base_url=server.base_url, model="scripted-demo-model", name="demo"
            )
            contract = TaskContract.workspace(
                GOAL, workspace, Command([sys.executable, "-m", "unittest", "-q"])
            ).with_max_steps(8)
            try:
                yield DemoParts(
                    contract,
                    provider,
                    demo_policy(),
                    select(sandbox),
                    LABEL,
                    workspace,
                    CONTAINMENT,
                    driver,
                )
            finally:
                await provider.aclose()
    finally:
        release(home)

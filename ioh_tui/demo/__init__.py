"""The built-in demo: a real run against a scripted model, with no key and no network.

It copies a bundled project with a failing test into a fresh temporary workspace, serves the bundled
scenario from a loopback model server over the real OpenAI wire, and talks to it through our own
streaming client. Tools, policy, approvals, sandbox, the test gate and the store are the real
ones.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

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


def demo_scenario() -> Scenario:
    """The bundled scenario, with this interpreter as the project's Python."""
    text = (HERE / "scenario.json").read_text(encoding="utf-8").replace("{python}", sys.executable)
    return parse_scenario(json.loads(text), where="demo scenario")


def demo_policy() -> Policy:
    """The default tiers (writes ask), plus running this project's tests without asking."""
    return (
        Policy.default().layer("demo").allow_exec(sys.executable, f"{sys.executable} -m unittest*")
    )


@asynccontextmanager
async def demo_parts(sandbox: str = "auto") -> AsyncIterator[DemoParts]:
    """Prepare a demo run; the workspace and the model server are gone when the block ends."""
    workspace = Path(tempfile.mkdtemp(prefix="ioh-tui-demo-"))
    try:
        shutil.copytree(HERE / "project", workspace, dirs_exist_ok=True)
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
                )
            finally:
                await provider.aclose()
    finally:
        shutil.rmtree(workspace, ignore_errors=True)

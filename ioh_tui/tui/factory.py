"""make_app: the one way the app is built — by the command line, the tests and the snapshot apps."""

from __future__ import annotations

import importlib
import time
from pathlib import Path
from typing import Any, Literal, cast

from ioh_tui.core.errors import ConfigError
from ioh_tui.engine import Containment, TaskContract
from ioh_tui.policy import Decision, Policy
from ioh_tui.providers.base import Provider
from ioh_tui.sandbox.base import Sandbox
from ioh_tui.tui.app import AppConfig, IohApp
from ioh_tui.tui.bridge import PartsSource, RunParts, RunPlan, given
from ioh_tui.tui.notify import Style
from ioh_tui.tui.resuming import Resumer
from ioh_tui.tui.totals import Clock

Mode = Literal["start", "demo", "run", "resume"]


def demo_source() -> PartsSource | None:
    """The demo's parts (`ioh_tui.demo.demo_parts`), or None when this build has no demo."""
    try:
        module = importlib.import_module("ioh_tui.demo")
    except ImportError:
        return None
    parts = getattr(module, "demo_parts", None)
    return cast(PartsSource, parts) if callable(parts) else None


def make_app(
    store_path: Path,
    *,
    mode: Mode = "run",
    contract: TaskContract | None = None,
    provider: Provider | None = None,
    policy: Policy | None = None,
    sandbox: Sandbox | None = None,
    run_id: int | None = None,
    decision: Decision | None = None,
    overrides: dict[str, Any] | None = None,
    containment: Containment | None = None,
    label: str = "",
    parts: PartsSource | None = None,
    clock: Clock | None = None,
    remember_file: Path | None = None,
    resumer: Resumer | None = None,
    notify: Style | None = None,
) -> IohApp:
    """Build the app for one mode.

    Args:
        store_path: The SQLite store.
        mode: `start` (the start screen), `demo`, `run` (a new run) or `resume`.
        contract: The task contract (mode `run`).
        provider: The model back-end (modes `run` and `resume`).
        policy: The policy (None: the engine's default, or the stored one on resume).
        sandbox: The sandbox (None: the strongest available).
        run_id: The run to resume (mode `resume`).
        decision: An answer to a resumed run's pending decision, given up front.
        overrides: Raised budgets for a resume.
        containment: Limits of a sub-agent tree; None runs a single agent.
        label: How the model is named on screen (default: `<model> via <provider>`).
        parts: A parts source replacing the pieces above (mode `demo` defaults to the demo's).
        clock: The time source for the elapsed meter (default `time.monotonic`).
        remember_file: The default policy file for remembered rules.
        resumer: Builds the parts that continue a stored run from its stored contract (the run
            browser's resume and answers to deferred decisions); None: the app cannot resume.
        notify: The desktop notification sequence for a waiting decision (None: none).

    Returns:
        The app, not yet running.

    Raises:
        ConfigError: A mode is missing what it needs.
    """
    plan: RunPlan | None = None
    if mode == "demo":
        source = parts or demo_source()
        if source is None:
            raise ConfigError("the demo is not available in this build")
        plan = RunPlan(store_path, "demo", source)
    elif mode in ("run", "resume"):
        if parts is None:
            if provider is None:
                raise ConfigError(f"mode {mode} needs a provider")
            parts = given(RunParts(provider, contract, policy, sandbox, label, containment))
        if mode == "run" and contract is None and provider is not None:
            raise ConfigError("a new run needs a task contract")
        if mode == "resume" and run_id is None:
            raise ConfigError("resume needs a run id")
        plan = RunPlan(store_path, mode, parts, run_id, decision, overrides)
    config = AppConfig(
        store_path,
        plan,
        clock or time.monotonic,
        demo=demo_source(),
        resumer=resumer,
        notify=notify,
    )
    if remember_file is not None:
        config.remember_file = remember_file
    return IohApp(config)

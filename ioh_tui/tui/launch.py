"""launch: what the command line calls to open the app (`ioh-tui`, `demo`, `run`, `resume`)."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ioh_tui.engine import Containment, TaskContract
from ioh_tui.policy import Decision, Policy
from ioh_tui.providers.base import Provider
from ioh_tui.sandbox.base import Sandbox

if TYPE_CHECKING:
    from ioh_tui.tui.resuming import Resumer


@dataclass
class LaunchSpec:
    """What to open the app on."""

    store_path: Path
    """The SQLite store."""
    mode: Literal["start", "demo", "run", "resume"]
    """The start screen, the demo, a new run, or a resumed one."""
    contract: TaskContract | None = None
    """The task contract (mode `run`)."""
    provider: Provider | None = None
    """The model back-end (modes `run` and `resume`)."""
    policy: Policy | None = None
    """The policy; None uses the engine's default (or the stored one on resume)."""
    sandbox: Sandbox | None = None
    """The sandbox; None picks the strongest available."""
    run_id: int | None = None
    """The run to resume."""
    decision: Decision | None = None
    """An answer to the resumed run's pending decision."""
    overrides: dict[str, Any] | None = None
    """Raised budgets for a resume."""
    containment: Containment | None = None
    """Limits of a sub-agent tree (`--max-agents` ...); None runs a single agent."""
    stored_provider: Callable[[dict[str, Any]], Provider] | None = None
    """Builds the provider that continues a stored run, from its stored contract (resuming from
    the run browser or answering a deferred decision in the app); None: the app cannot resume."""


def launch(spec: LaunchSpec) -> int:
    """Run the app until it is closed.

    Args:
        spec: What to open.

    Returns:
        The run's exit status (interface.md §2), or 0 when only the start screen was used.

    Raises:
        ConfigError: The spec is missing what its mode needs (nothing was started).
    """
    from ioh_tui.tui.factory import make_app
    from ioh_tui.tui.notify import NOTIFY_ENV, notify_style

    app = make_app(
        spec.store_path,
        mode=spec.mode,
        contract=spec.contract,
        provider=spec.provider,
        policy=spec.policy,
        sandbox=spec.sandbox,
        run_id=spec.run_id,
        decision=spec.decision,
        overrides=spec.overrides,
        containment=spec.containment,
        resumer=_resumer(spec),
        notify=notify_style(os.environ.get(NOTIFY_ENV, "")),
    )
    app.run()
    return app.exit_status


def _resumer(spec: LaunchSpec) -> Resumer | None:
    """The app's way to continue a stored run: the stored provider, in the spec's sandbox."""
    from ioh_tui.tui.bridge import PartsSource, RunParts, given

    build = spec.stored_provider
    if build is None:
        return None

    def parts(contract: dict[str, Any]) -> PartsSource:
        # Built when a run is resumed, so a missing key is a one-line refusal, not a failed start.
        return given(RunParts(build(contract), sandbox=spec.sandbox))

    return parts

"""make_app: the one way the app is built — by the command line, the tests and the snapshot apps.

Building the app imports only what its first frame draws: the engine, the store and the demo are
imported when a run starts or the store is read (benchmarks/bench_tui_first_frame.py;
tests/tui/test_first_frame.py holds it).
"""

from __future__ import annotations

import importlib
import importlib.util
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from ioh_tui.core.errors import ConfigError
from ioh_tui.tui.app import IohApp
from ioh_tui.tui.app_run import AppRun, PartsSource, given
from ioh_tui.tui.config import AppConfig

if TYPE_CHECKING:
    from ioh_tui.mcp import Lister
    from ioh_tui.tui.app_run import Resumer, TrustQuestion
    from ioh_tui.tui.notify import Style, TerminalWriter
    from ioh_tui.tui.totals import Clock

DEMO = "ioh_tui.demo"


def demo_source() -> PartsSource | None:
    """The demo's run (`ioh_tui.demo.demo_parts`), or None when this build has no demo.

    The demo's package is only found here, not imported: it is imported when the demo starts.
    """
    if importlib.util.find_spec(DEMO) is None:
        return None

    @asynccontextmanager
    async def source() -> AsyncIterator[AppRun]:
        from ioh_tui.engine import NewRun

        parts = getattr(importlib.import_module(DEMO), "demo_parts", None)
        if not callable(parts):
            raise ConfigError("the demo is not available in this build")
        # The demo's agent runs as a small tree: its containment goes into the request. Its driver
        # (the scripted model on the scenario beside the workspace) lets a resume rebuild it.
        async with parts() as demo:
            request = NewRun(demo.contract, demo.containment, demo.driver)
            yield AppRun(request, demo.provider, demo.policy, demo.sandbox, demo.label)

    return source


def make_app(
    store_path: Path,
    run: AppRun | PartsSource | None = None,
    *,
    demo: bool = False,
    clock: Clock | None = None,
    remember_file: Path | None = None,
    resumer: Resumer | None = None,
    notify: Style | None = None,
    terminal: TerminalWriter | None = None,
    trust: TrustQuestion | None = None,
    mcp: Lister | None = None,
) -> IohApp:
    """Build the app on a run, on the demo, or (neither) on the start screen.

    Args:
        store_path: The SQLite store.
        run: The run to supervise, or a source opening it for its length.
        demo: Open on the built-in demo (its run, unless `run` replaces it).
        clock: The time source for the elapsed meter (default `time.monotonic`).
        remember_file: The default policy file for remembered rules.
        resumer: Builds the run that continues a stored one (the run browser's resume and
            answers to deferred decisions); None: the app cannot resume.
        notify: The desktop notification sequence for a waiting decision (None: none).
        terminal: Where terminal signals are written (None: the app's terminal).
        trust: Project sections to show before the run starts (`screens/trust.py`).
        mcp: Lists the configured MCP servers on the start screen (None: none are configured).

    Returns:
        The app, not yet running.

    Raises:
        ConfigError: The demo was asked for and this build has none.
    """
    source = given(run) if isinstance(run, AppRun) else run
    if demo and source is None:
        source = demo_source()
        if source is None:
            raise ConfigError("the demo is not available in this build")
    config = AppConfig(
        store_path,
        source,
        clock or time.monotonic,
        demo=demo_source(),
        resumer=resumer,
        notify=notify,
        terminal=terminal,
        trust=trust,
        mcp=mcp,
    )
    if remember_file is not None:
        config.remember_file = remember_file
    return IohApp(config)

"""AppConfig: how the app is built (`factory.make_app` fills it in). No Textual here."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ioh_tui.paths import data_dir

if TYPE_CHECKING:  # built before the app's first frame: the types only
    from ioh_tui.mcp import Lister
    from ioh_tui.tui.app_run import PartsSource, Resumer, TrustQuestion
    from ioh_tui.tui.notify import Style, TerminalWriter
    from ioh_tui.tui.totals import Clock


@dataclass(slots=True)
class AppConfig:
    """How the app is built (see `factory.make_app`)."""

    store_path: Path
    run: PartsSource | None = None
    """The run to supervise; None opens the start screen."""
    clock: Clock = time.monotonic
    remember_file: Path = field(default_factory=lambda: data_dir() / "policy.toml")
    """Where a remembered rule is saved by default (editable in the modal)."""
    demo: PartsSource | None = None
    """The demo's run, when the demo is available (offered on the start screen)."""
    resumer: Resumer | None = None
    """Builds the run that continues a stored one (None: runs cannot be resumed in the app)."""
    notify: Style | None = None
    """The desktop notification sequence for a waiting decision (`tui/notify.py`; None: none)."""
    terminal: TerminalWriter | None = None
    """Where terminal signals are written (None: this app's terminal; tests record them)."""
    trust: TrustQuestion | None = None
    """Project sections to show before `run` starts (None: nothing to ask)."""
    mcp: Lister | None = None
    """Lists the configured MCP servers on the start screen (None: none are configured)."""

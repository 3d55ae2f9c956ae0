"""launch: what the command line calls to open the app (`ioh-tui`, `demo`, `run`, `resume`).

Cheap to import: the app (and Textual) load only when `launch` runs, and the engine only when a
run starts (the app's first frame does not wait for it).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

from ioh_tui.core.errors import ConfigError
from ioh_tui.tui.app_run import AppRun, ProjectSection, Resumer, TrustQuestion

if TYPE_CHECKING:
    from ioh_tui.engine import Resume
    from ioh_tui.hooks import HookSet
    from ioh_tui.mcp import Lister, ServerSpec
    from ioh_tui.providers.base import Provider
    from ioh_tui.sandbox.base import Sandbox

__all__ = ["AppRun", "ProjectSection", "TrustQuestion", "launch"]

StoredProvider: TypeAlias = "Callable[[dict[str, Any]], Provider]"
"""Builds the provider that continues a stored run, from its stored contract."""
Extensions: TypeAlias = "Callable[[Path], tuple[HookSet, tuple[ServerSpec, ...]]]"
"""The hooks and MCP servers of a run working in a workspace (from its configuration files)."""


def launch(
    store_path: Path,
    run: AppRun | None = None,
    *,
    demo: bool = False,
    stored_provider: StoredProvider | None = None,
    sandbox: Sandbox | None = None,
    trust: TrustQuestion | None = None,
    mcp: Lister | None = None,
    extensions: Extensions | None = None,
) -> int:
    """Run the app until it is closed.

    Args:
        store_path: The SQLite store.
        run: The run to supervise (`ioh-tui run`, `ioh-tui resume`); None: the start screen.
        demo: Open on the built-in demo.
        stored_provider: Builds the provider that continues a stored run (resuming from the run
            browser or answering a deferred decision); None: the app cannot resume.
        sandbox: The sandbox such resumed runs use (None: the strongest available).
        trust: Project sections to show before `run` starts (None: nothing to ask).
        mcp: Lists the configured MCP servers on the start screen (None: none are configured).
        extensions: The hooks and servers of a run resumed from the app (its run browser, its
            queue), by the run's workspace; None: such runs have none.

    Returns:
        The run's exit status (interface.md §2), or 0 when only the start screen was used.

    Raises:
        ConfigError: The demo was asked for and this build has none, or stdin or stdout is not a
            terminal (nothing was started).
    """
    from ioh_tui.tui.factory import make_app
    from ioh_tui.tui.notify import NOTIFY_ENV, notify_style
    from ioh_tui.tui.widgets.image_view import prepare

    notify = notify_style(os.environ.get(NOTIFY_ENV, ""))
    _need_a_terminal()
    # Before the app: textual-image asks the terminal what it draws, which it cannot once
    # Textual reads the keys.
    prepare()
    app = make_app(
        store_path,
        run,
        demo=demo,
        resumer=_resumer(stored_provider, sandbox, extensions),
        notify=notify,
        trust=trust,
        mcp=mcp,
    )
    app.run()
    return app.exit_status


WEB_DRIVER = "textual.drivers.web_driver:WebDriver"
"""The driver textual-serve starts the app with (`ioh-tui web`, `ioh_tui/web/`)."""


def _need_a_terminal() -> None:
    """Refuse to start the app where it cannot be drawn or driven.

    Without this a redirected `ioh-tui demo` hangs for ever and writes escape codes into a file.
    """
    if os.environ.get("TEXTUAL_DRIVER") == WEB_DRIVER:
        return  # a browser tab of `ioh-tui web`: textual-serve relays the screen and the keys
    if not (sys.stdin.isatty() and sys.stdout.isatty()) or os.environ.get("TERM") == "dumb":
        raise ConfigError(
            "the app needs a terminal (stdin and stdout are not both one, or TERM=dumb): "
            "use `ioh-tui exec` or `ioh-tui demo --headless`, or `resume --headless`"
        )


def _resumer(
    build: StoredProvider | None, sandbox: Sandbox | None, extensions: Extensions | None = None
) -> Resumer | None:
    """The app's way to continue a stored run: the stored provider, in the given sandbox.

    Under the hooks and MCP servers of the run's own workspace, as `resume --headless` runs it.
    """
    if build is None:
        return None

    def resumed(request: Resume, contract: dict[str, Any]) -> AppRun:
        # Built when a run is resumed, so a missing key is a one-line refusal, not a failed start.
        provider = build(contract)
        if extensions is None:
            return AppRun(request, provider, sandbox=sandbox)
        from ioh_tui.engine import TaskContract

        hooks, servers = extensions(TaskContract.from_dict(contract).root)
        return AppRun(request, provider, sandbox=sandbox, mcp=servers, hooks=hooks)

    return resumed

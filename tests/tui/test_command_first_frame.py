"""`ioh-tui` itself hands the terminal to the app before it loads any part of a run (issue 23).

`tests/tui/test_first_frame.py` holds the app (`make_app`); these hold the command in front of it:
`ioh_tui.cli.main` as typed, on a store that exists (so it is checked) and a user configuration
the app is handed (`notifications.style`, `sandbox.root_user`). The run's parts (`cli.options`,
the engine, MCP, the store package) are imported when first used, after the first frame.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.tui.test_first_frame import NOT_AT_FIRST_FRAME, WATCH, made

AT_LAUNCH = """
import os
import sys

import ioh_tui.tui.launch as launching
from ioh_tui.cli import main

heavy = ("httpx", "aiosqlite", "mcp", "markdown_it")


def launch(*args, **options):
    # What the command loaded before it handed over to the app, and what it handed over.
    print(" ".join(m for m in sys.modules if m.startswith("ioh_tui") or m.split(".")[0] in heavy))
    print(os.environ.get("IOH_TUI_NOTIFY"), os.environ.get("IOH_TUI_SANDBOX_ROOT_USER"))
    return 0


launching.launch = launch
sys.exit(main(sys.argv[1:]))
"""
"""`ioh-tui ARGS` up to `launch`: prints the modules loaded then, and the two variables."""
AT_FIRST_FRAME = (
    """
import os
import sys

import ioh_tui.tui.launch as launching
from ioh_tui.cli import main
from ioh_tui.tui.app import IohApp

launching._need_a_terminal = lambda: None  # stdout is the test's pipe
run = IohApp.run
built = []
IohApp.run = lambda app, **_: built.append(app)  # the app `ioh-tui` built, not yet run
main(sys.argv[1:])
IohApp.run = run
app = built[0]
"""
    + WATCH
    + """
print(os.environ.get("IOH_TUI_NOTIFY"), os.environ.get("IOH_TUI_SANDBOX_ROOT_USER"))
"""
)
"""`ioh-tui ARGS` to the app's start: the modules loaded at the start screen's first frame, once
the store is read, and the two variables it was handed."""
RUN_PARTS = (
    "ioh_tui.cli.options",
    "ioh_tui.cli.extensions",
    "ioh_tui.cli.mcp_command",
    "ioh_tui.cli.decide",
    "ioh_tui.cli.fleet",
    *NOT_AT_FIRST_FRAME,
)
"""Not loaded before the app has drawn: what builds a run, and what the app's first frame lacks."""


def _ioh(program: str, store: Path, *argv: str) -> list[str]:
    """Run `program` on `ioh-tui --store STORE ARGV` with a user configuration; its lines."""
    config = Path(os.environ["XDG_CONFIG_HOME"]) / "ioh-tui" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('[notifications]\nstyle = "osc9"\n\n[sandbox]\nroot_user = "nobody"\n')
    done = subprocess.run(
        [sys.executable, "-c", program, "--store", str(store), *argv],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        cwd=store.parent,
    )
    return done.stdout.splitlines()


@pytest.mark.parametrize("argv", [(), ("demo",)])
def test_the_command_hands_over_to_the_app_before_loading_a_run(
    argv: tuple[str, ...], tmp_path: Path
) -> None:
    asyncio.run(made(tmp_path / "store.db"))
    loaded, handed = _ioh(AT_LAUNCH, tmp_path / "store.db", *argv)
    modules = set(loaded.split())
    assert "ioh_tui.dbfile.check" in modules  # the store was checked, without the store package
    early = {m for m in modules if m.startswith(RUN_PARTS)}
    assert not early, sorted(early)
    assert handed == "osc9 nobody"


def test_a_bad_store_is_still_one_line_before_the_app(tmp_path: Path) -> None:
    notes = tmp_path / "notes.db"
    notes.write_text("these are my notes, not a store\n")
    done = subprocess.run(
        [sys.executable, "-c", AT_LAUNCH, "--store", str(notes)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (done.returncode, done.stdout) == (2, "")  # `launch` was never called
    assert (
        done.stderr
        == f"ioh-tui: store {notes} is not an ioh-tui store: it is not an SQLite database\n"
    )


def test_the_start_screen_is_drawn_before_the_command_loads_a_run(tmp_path: Path) -> None:
    asyncio.run(made(tmp_path / "store.db"))
    first, after, handed = _ioh(AT_FIRST_FRAME, tmp_path / "store.db")
    modules = set(first.split())
    assert "ioh_tui.tui.screens.start" in modules
    early = {m for m in modules if m.startswith(RUN_PARTS)}
    assert not early, sorted(early)
    # The store was read after that frame, and the app was handed the configuration.
    assert "ioh_tui.store" in after.split()
    assert handed == "osc9 nobody"


def test_the_start_screens_servers_are_listed_through_the_configuration_read_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The lister is handed over unbuilt; its first listing builds the sandbox and the policy."""
    import ioh_tui.tui.launch as launch_module
    from ioh_tui.cli import main

    handed: list[dict[str, Any]] = []

    def capture(store_path: Path, run: object = None, **options: Any) -> int:
        handed.append(options)
        return 0

    monkeypatch.setattr(launch_module, "launch", capture)
    monkeypatch.chdir(tmp_path)
    assert main(["--store", str(tmp_path / "s.db")]) == 0
    assert handed[0]["mcp"] is None  # no server configured: the screen has no table for them
    config = Path(os.environ["XDG_CONFIG_HOME"]) / "ioh-tui" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('[mcp.servers.broken]\ncommand = "/nonexistent/server"\n')
    assert main(["--store", str(tmp_path / "s.db")]) == 0
    lister = handed[1]["mcp"]
    for _ in range(2):  # built once, listed each time the screen asks
        (row,) = asyncio.run(lister())
        assert (row.name, row.state) == ("broken", "failed")


def test_the_variables_handed_over_are_the_ones_their_readers_read() -> None:
    # Named again in `cli/effective.py`, so handing them over imports neither the sandbox nor
    # the app's notifications.
    from ioh_tui.cli import effective
    from ioh_tui.sandbox.user import ROOT_USER_ENV
    from ioh_tui.tui.notify import NOTIFY_ENV

    assert (effective.ROOT_USER_ENV, effective.NOTIFY_ENV) == (ROOT_USER_ENV, NOTIFY_ENV)

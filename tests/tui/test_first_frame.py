"""The app draws its start screen before it imports the engine or reads the store (issue 23).

A fresh interpreter builds the app as `ioh-tui` does and, once the start screen has been drawn,
lists what was imported by then: nothing of the engine, the store, a provider, the sandbox, the
policy or MCP. Later, the store is read (the lists fill in) and the screen's keys import what they
open.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

from ioh_tui.store import Store

WATCH = """
import sys

from ioh_tui.tui.screens.start import StartScreen

heavy = ("httpx", "aiosqlite", "mcp", "markdown_it")
first = []


def loaded():
    return " ".join(
        sorted(m for m in sys.modules if m.startswith("ioh_tui") or m.split(".")[0] in heavy)
    )


display = app._display


def shown(screen, renderable):
    # The first frame of the start screen written to the terminal: what was imported by then.
    if isinstance(screen, StartScreen) and renderable is not None and not first:
        first.append(loaded())
    display(screen, renderable)


app._display = shown


async def drawn(pilot):
    while not (first and isinstance(app.screen, StartScreen) and app.screen._loaded):
        await pilot.pause(0.01)
    print(first[0])
    print(loaded())
    app.exit()


app.run(headless=True, size=(120, 40), auto_pilot=drawn)
"""
"""Runs `app` headless on its start screen: prints the modules loaded at its first frame, then
once the store is read (`test_command_first_frame.py` runs it on the app `ioh-tui` builds)."""
PROGRAM = (
    """
import sys
from pathlib import Path

from ioh_tui.tui.factory import make_app

app = make_app(Path(sys.argv[1]))
"""
    + WATCH
)
"""The app on a store: prints the modules loaded at its first frame, then once the store is read."""

NOT_AT_FIRST_FRAME = (
    "ioh_tui.engine",
    "ioh_tui.store",
    "ioh_tui.providers",
    "ioh_tui.sandbox",
    "ioh_tui.policy",
    "ioh_tui.mcp",
    "ioh_tui.tools",
    "ioh_tui.demo",
    "ioh_tui.tui.screens.run",
    "ioh_tui.tui.bridge",
    "httpx",
    "aiosqlite",
    "mcp",
    "markdown_it",
)


async def made(path: Path) -> None:
    """An empty store at `path` (the app reads one that exists)."""
    async with Store.open(path):
        pass


def test_the_start_screen_is_drawn_before_the_engine_or_the_store_is_imported(
    tmp_path: Path,
) -> None:
    asyncio.run(made(tmp_path / "store.db"))
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM, str(tmp_path / "store.db")],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    first, after = (set(line.split()) for line in done.stdout.splitlines())
    assert "ioh_tui.tui.screens.start" in first
    early = {m for m in first if m.startswith(NOT_AT_FIRST_FRAME)}
    assert not early, sorted(early)
    # The store was read after that frame: the screen's lists came from it.
    assert "ioh_tui.store" in after

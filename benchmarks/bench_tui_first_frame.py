"""The app's launch to its first frame, against a bare interpreter and a bare Textual app.

A fresh interpreter builds the app on a new store as `ioh-tui` does (the start screen), runs it
headless and prints a line once the start screen has been drawn; the time is from starting the
process to reading that line. The real command is timed the same way: `ioh-tui --store S` through
`ioh_tui.cli.main` (its options, the store check, the configuration, then `launch`), on a store
that exists, so it is checked; only the terminal check is skipped and the app runs headless. The floor is the same for a Textual app of one screen holding a
line of text and a table: what importing Textual and drawing a first frame cost on this machine,
which no change to ioh-tui can go below. Each runs RUNS times; the medians are compared. Prints
figures; asserts nothing.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RUNS = 5
APP = """
import sys
from pathlib import Path

from ioh_tui.tui.factory import make_app
from ioh_tui.tui.screens.start import StartScreen

app = make_app(Path(sys.argv[1]))


async def drawn(pilot):
    while not isinstance(app.screen, StartScreen):
        await pilot.pause(0)
    app.screen.call_after_refresh(lambda: (print("drawn", flush=True), app.exit()))


app.run(headless=True, size=(120, 40), auto_pilot=drawn)
"""
"""The app on a new store; prints `drawn` once its start screen has been refreshed."""
MAKE_STORE = """
import asyncio
import sys
from pathlib import Path

from ioh_tui.store import Store


async def made():
    async with Store.open(Path(sys.argv[1])):
        pass


asyncio.run(made())
"""
COMMAND = """
import sys

import ioh_tui.tui.launch as launching
from ioh_tui.cli import main
from ioh_tui.tui.app import IohApp
from ioh_tui.tui.screens.start import StartScreen

launching._need_a_terminal = lambda: None  # stdout is the benchmark's pipe
run = IohApp.run


def headless(app, **_):
    async def drawn(pilot):
        while not isinstance(app.screen, StartScreen):
            await pilot.pause(0)
        app.screen.call_after_refresh(lambda: (print("drawn", flush=True), app.exit()))

    return run(app, headless=True, size=(120, 40), auto_pilot=drawn)


IohApp.run = headless
sys.exit(main(sys.argv[1:]))
"""
"""`ioh-tui --store S` as typed, to the start screen's first frame (then `drawn`, as APP)."""
BARE_TEXTUAL = """
from textual.app import App
from textual.screen import Screen
from textual.widgets import DataTable, Static


class Start(Screen):
    def compose(self):
        yield Static("start")
        yield DataTable()


class Bare(App):
    def on_mount(self):
        self.push_screen(Start())


app = Bare()


async def drawn(pilot):
    while not isinstance(app.screen, Start):
        await pilot.pause(0)
    app.screen.call_after_refresh(lambda: (print("drawn", flush=True), app.exit()))


app.run(headless=True, size=(120, 40), auto_pilot=drawn)
"""
"""A bare Textual app with a screen like the start screen's first frame (the floor)."""


def _made(path: Path) -> None:
    """An empty store at `path` (made in a child: this process imports no store)."""
    subprocess.run([sys.executable, "-c", MAKE_STORE, str(path)], check=True)


def median_seconds(argv: list[str]) -> float:
    """The median time from starting `argv` to its first line of output (or its end)."""
    times = []
    for _ in range(RUNS):
        started = time.perf_counter()
        with subprocess.Popen(argv, stdout=subprocess.PIPE) as process:
            assert process.stdout is not None
            process.stdout.readline()
            times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    """Print the app's first frame, the bare interpreter's and a bare Textual app's."""
    bare = median_seconds([sys.executable, "-c", "pass"])
    floor = median_seconds([sys.executable, "-c", BARE_TEXTUAL])
    with tempfile.TemporaryDirectory(prefix="bench-first-frame-") as tmp:
        frame = median_seconds([sys.executable, "-c", APP, str(Path(tmp) / "store.db")])
        store = Path(tmp) / "used.db"
        _made(store)
        # The same app on the same store: the start screen's first read of a store that exists
        # races the `drawn` line, so the command is compared with the app on that store.
        used = median_seconds([sys.executable, "-c", APP, str(store)])
        command = median_seconds([sys.executable, "-c", COMMAND, "--store", str(store)])
    print(f"python -c pass:          median {bare * 1000:.0f} ms")
    print(f"bare Textual app:        median {floor * 1000:.0f} ms (the floor)")
    print(
        f"app to first frame:      median {frame * 1000:.0f} ms ({frame / bare:.1f}x bare,"
        f" {frame / floor:.2f}x the bare Textual app)"
    )
    print(f"app, a store that exists: median {used * 1000:.0f} ms")
    print(
        f"`ioh-tui` to first frame: median {command * 1000:.0f} ms ({command / used:.2f}x the"
        f" app's on that store, {command / floor:.2f}x the bare Textual app)"
    )
    print(
        f"table | app launch to first frame (start screen, new store) | {frame:.2f} s"
        f" ({frame / floor:.2f}x a bare Textual app's {floor:.2f} s; {frame / bare:.0f}x"
        f" `python -c pass`) | a bare Textual app | ≤ 0.3 s"
    )
    print(
        f"table | `ioh-tui` to first frame (the command, a store to check) | {command:.2f} s"
        f" ({command / floor:.2f}x a bare Textual app's {floor:.2f} s; {command / used:.2f}x"
        f" the app's own launch on that store) | a bare Textual app | ≤ 0.3 s"
    )


if __name__ == "__main__":
    main()

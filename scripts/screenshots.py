"""Render the docs pictures in screenshots/ by driving the real app with Pilot.

Every picture is of the real app over the real engine, store and sandbox; the models are scripted
(the demo's is served over the OpenAI wire on loopback, the others are in-process), so nothing
leaves the machine. Each is saved as SVG with `app.save_screenshot` and converted to PNG when a
converter is installed (`rsvg-convert`, or the `cairosvg` package); SVG alone is fine.

    start-screen-with-pending-decisions  the start screen over a store holding a deferred run
                                         (its decision waiting on you) and finished ones
    demo-running-agent-tree              the demo mid-run: transcript, sub-agent tree, meters
    demo-decision-modal                  the demo's write waiting on you: the diff, five answers
    help-keys                            F1 over the modal: the list of keys (first screenful)
    demo-finished                        the demo after `y`: gate passed, `success`
    demo-decision-modal-80x24            the same modal at 80x24
    decision-queue-similar-requests      three children ask to write at once; the queue (`w`)
                                         with the three similar requests marked (`s`)
    decision-queue-batch-rule            `A` on the marked: one suggested rule for all three
    budget-offer                         "budget nearly spent" over a run at its step cap
    workspace-changes-diff               the `f` drawer: the changed file and its diff
    processes-running-command            the `p` drawer while a command runs (live samples)
    run-browser                          every stored run: state, steps, tokens, start
    run-trace-steps                      a run's trace, Steps tab: each call and its result
    run-trace-decisions                  the Decisions tab: answer, who, rule and layer
    tree-100-agents                      100 scripted children, 10 at a time, mid-run:
                                         nodes per started agent and `+N queued`
    tree-100-agents-child-selected       the same run, a child chosen in the tree (one that was
                                         running): the transcript shows its steps only
    long-run-compacted                   a run against a 3,000-token window, finished: a
                                         compaction block, the context meter, a note
    long-run-summary                     `c` on it: the summary the compaction stored

Sizes: the demo run 140x40 (the modal's diff splits before/after from 140 columns), the queue
140x36, the 100-agent tree 160x50, the rest 120x40. The apps come from the test helpers
(tests/tui/harness.py, tests/tui/stored_runs.py and tests/snapshots/apps/), so the pictures show
what the tests check. The stored
runs' timestamps and paths are normalised like the snapshots' (2025-06-01, /work); the live
pictures show the real clock, sandbox and processes.

`--only WORD` makes just the pictures whose names contain WORD (with the others of the same run).

Usage: python scripts/screenshots.py [--out DIR] [--only WORD ...]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # run from a checkout without installing

QUEUE = (140, 36)
"""The queue pictures (the snapshot tests' size for them)."""
WIDE_DEMO = (140, 40)
"""The demo run: room for the tree pane's labels, and the modal's split diff (from 140 columns)."""
SIZE = (120, 40)
"""Everything else: the size scripts/demo_tmux.py plays the demo at."""


async def until(pilot: Any, predicate: Callable[[], bool], within: float = 90.0) -> None:
    """Let the app work until `predicate` holds."""
    deadline = asyncio.get_running_loop().time() + within
    while not predicate():
        if asyncio.get_running_loop().time() > deadline:
            raise SystemExit("screenshots: the app did not reach the expected state in time")
        await pilot.pause(0.05)


def steady(app: Any) -> None:
    """No blinking cursors in pictures (on every screen shown, modals' backgrounds included)."""
    from textual.widgets import Input, TextArea

    for screen in app.screen_stack:
        for widget in screen.query("Input, TextArea"):
            if isinstance(widget, Input | TextArea):
                widget.cursor_blink = False


async def shoot(app: Any, pilot: Any, out: Path, name: str) -> Path:
    """Let the screen settle, then save one SVG (and its PNG when possible)."""
    steady(app)
    await pilot.pause(0.3)
    svg = Path(app.save_screenshot(f"{name}.svg", path=str(out)))
    png = to_png(svg)
    print(f"screenshots: {svg.name}" + (f" + {png.name}" if png else ""))
    return svg


def to_png(svg: Path) -> Path | None:
    """Convert with rsvg-convert or cairosvg, whichever exists; None when neither does."""
    png = svg.with_suffix(".png")
    # Textual writes runs of spaces as no-break spaces; without xml:space="preserve" converters
    # drop the one leading each styled span, gluing words together in the picture.
    text = svg.read_text(encoding="utf-8").replace("<svg ", '<svg xml:space="preserve" ', 1)
    if shutil.which("rsvg-convert"):
        subprocess.run(["rsvg-convert", "-o", str(png)], input=text.encode(), check=True)
        return png
    try:
        cairosvg = importlib.import_module("cairosvg")
    except ImportError:
        return None
    cairosvg.svg2png(bytestring=text.encode(), write_to=str(png))
    return png


def is_screen(app: Any, kind: type) -> Callable[[], bool]:
    return lambda: isinstance(app.screen, kind)


async def stored_history(tmp: Path) -> Path:
    """A store of real scripted runs (`tests/tui/stored_runs.py`), normalised like the snapshots'."""
    from tests.tui.stored_runs import history, normalise

    db = await history(tmp)
    normalise(db, tmp)
    return db


# The pictures ------------------------------------------------------------------------------------


async def start_screen(out: Path, tmp: Path) -> None:
    """The start screen over a store with a deferred decision and finished runs."""
    from ioh_tui.tui.factory import make_app

    app = make_app(await stored_history(tmp))
    app.animation_level = "none"
    async with app.run_test(size=SIZE) as pilot:
        await app.workers.wait_for_complete()
        await shoot(app, pilot, out, "start-screen-with-pending-decisions")


async def demo(out: Path, tmp: Path) -> None:
    """One demo run at 120x40: mid-run with its tree, the modal, the keys, the end."""
    from ioh_tui.tui.factory import make_app
    from ioh_tui.tui.screens.approval import ApprovalModal
    from ioh_tui.tui.screens.help import HelpScreen

    app = make_app(tmp / "store.db", demo=True)
    app.animation_level = "none"
    async with app.run_test(size=WIDE_DEMO) as pilot:
        screen = app.run_screen
        assert screen is not None
        tree = screen.agent_tree

        def children_working() -> bool:
            rows = [r for r in tree.rows.values() if r.agent_id != tree.root_agent]
            return len(tree.nodes_by_agent) >= 2 and any(r.state == "running" for r in rows)

        await until(pilot, children_working)
        await pilot.pause(0.4)  # their first lines stream in
        await shoot(app, pilot, out, "demo-running-agent-tree")
        await until(pilot, is_screen(app, ApprovalModal))
        await shoot(app, pilot, out, "demo-decision-modal")
        await pilot.press("f1")
        await until(pilot, is_screen(app, HelpScreen))
        await shoot(app, pilot, out, "help-keys")
        await pilot.press("escape", "y")
        await until(pilot, lambda: screen.outcome is not None)
        await app.workers.wait_for_complete()
        await pilot.pause(0.3)
        await shoot(app, pilot, out, "demo-finished")


async def demo_narrow(out: Path, tmp: Path) -> None:
    """The demo's decision modal at 80x24."""
    from ioh_tui.tui.factory import make_app
    from ioh_tui.tui.screens.approval import ApprovalModal

    app = make_app(tmp / "store.db", demo=True)
    app.animation_level = "none"
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, is_screen(app, ApprovalModal))
        await shoot(app, pilot, out, "demo-decision-modal-80x24")


async def decision_queue(out: Path, tmp: Path) -> None:
    """Three children ask to write at once: the queue with them marked, then the batch rule."""
    from ioh_tui.tui.screens.approval import ApprovalModal
    from ioh_tui.tui.screens.batch import BatchModal
    from ioh_tui.tui.screens.queue import DecisionQueueScreen
    from tests.snapshots.apps.fleet import writers_app

    app = writers_app(tmp, 3, stagger_ms=300)
    async with app.run_test(size=QUEUE) as pilot:
        screen = app.run_screen
        assert screen is not None
        await until(pilot, is_screen(app, ApprovalModal))
        await until(pilot, lambda: len(screen.desk.asks) == 3)
        await pilot.press("w")
        await until(pilot, is_screen(app, DecisionQueueScreen))
        await pilot.pause()
        await pilot.press("s")
        await shoot(app, pilot, out, "decision-queue-similar-requests")
        await pilot.press("A")
        await until(pilot, is_screen(app, BatchModal))
        await shoot(app, pilot, out, "decision-queue-batch-rule")


async def budget_offer(out: Path, tmp: Path) -> None:
    """A run reaches its last step: the offer to raise the limit, stop, or let it finish."""
    from ioh_tui.tui.screens.budget import BudgetModal
    from tests.tui.harness import READ_CALC, USAGE, build

    read = {"text": "Reading `calc.py`.", "tool_calls": [READ_CALC], "usage": USAGE}
    app = build(tmp, read, {**read, "delay_ms": 60_000}, max_steps=2)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, is_screen(app, BudgetModal))
        await shoot(app, pilot, out, "budget-offer")


async def workspace_changes(out: Path, tmp: Path) -> None:
    """The calc run approved and finished; `f` shows the changed file and its diff."""
    from ioh_tui.tui.screens.approval import ApprovalModal
    from ioh_tui.tui.widgets.file_changes import FileChanges
    from tests.snapshots.apps.calc_run import fixing_app

    app = fixing_app(tmp)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.run_screen
        assert screen is not None
        await until(pilot, is_screen(app, ApprovalModal))
        await pilot.pause()
        await pilot.press("y")
        await until(pilot, lambda: screen.outcome is not None)
        await app.workers.wait_for_complete()
        await pilot.press("f")
        pane = screen.query_one(FileChanges)
        await until(pilot, lambda: pane.shown == "calc.py")
        await shoot(app, pilot, out, "workspace-changes-diff")


async def processes(out: Path, tmp: Path) -> None:
    """A command runs (its output streaming); `p` shows its processes, sampled live."""
    from ioh_tui.tui.widgets.processes import Processes
    from ioh_tui.tui.widgets.tool_call import ToolCall
    from tests.snapshots.apps.calc_run import running_app

    app = running_app(tmp)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.run_screen
        assert screen is not None
        await until(pilot, lambda: any("test_add" in c.live for c in screen.query(ToolCall)))
        await pilot.press("p")
        pane = screen.query_one(Processes)
        await until(pilot, lambda: any("slow_tests" in s.command for s in pane.samples))
        await pilot.pause(1.2)  # a second sample, so the CPU column is a reading
        await shoot(app, pilot, out, "processes-running-command")


async def run_browser_and_trace(out: Path, tmp: Path) -> None:
    """The run browser over the stored history, then run 1's trace (steps, decisions)."""
    from ioh_tui.tui.factory import make_app
    from ioh_tui.tui.screens.runs import RunBrowserScreen
    from ioh_tui.tui.screens.trace import TraceScreen

    app = make_app(await stored_history(tmp))
    app.animation_level = "none"
    async with app.run_test(size=SIZE) as pilot:
        await app.workers.wait_for_complete()
        await pilot.press("b")
        await until(pilot, is_screen(app, RunBrowserScreen))
        await app.workers.wait_for_complete()
        await shoot(app, pilot, out, "run-browser")
        await pilot.press("down", "down", "down", "down", "enter")  # run 1: the oldest, last
        await until(pilot, is_screen(app, TraceScreen))
        await app.workers.wait_for_complete()
        await pilot.press("1")
        await shoot(app, pilot, out, "run-trace-steps")
        await pilot.press("2")
        await shoot(app, pilot, out, "run-trace-decisions")


async def tree_100(out: Path, tmp: Path) -> None:
    """100 scripted children, 10 at a time; the picture is taken while most are still queued."""
    from tests.snapshots.apps.fleet import tree_app

    app = tree_app(tmp, 100, max_concurrent=10, delay_ms=400)
    async with app.run_test(size=(160, 50)) as pilot:
        screen = app.run_screen
        assert screen is not None
        tree = screen.agent_tree
        await until(
            pilot,
            lambda: (
                len(tree.nodes_by_agent) >= 30 and any(n.data is None for n in tree.root.children)
            ),
        )
        await shoot(app, pilot, out, "tree-100-agents")
        running = [
            a for a, row in tree.rows.items() if row.state == "running" and a in tree.nodes_by_agent
        ]
        tree.focus()
        tree.move_cursor(tree.nodes_by_agent[running[-1]])
        await pilot.press("enter")
        await until(pilot, lambda: bool(screen.transcript.query(f".-of-{running[-1]}")))
        await shoot(app, pilot, out, "tree-100-agents-child-selected")


async def long_run(out: Path, tmp: Path) -> None:
    """A note and six big reads against a small window: a compaction, then its summary (`c`)."""
    from ioh_tui.tui.screens.budget import BudgetModal
    from ioh_tui.tui.screens.summary import SummaryModal
    from tests.snapshots.apps.long_run import long_run

    app = long_run(tmp)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.run_screen
        assert screen is not None
        # Its last steps near the step cap: the offer to raise it is answered "let it finish"
        # (unanswered, the engine would hold for it two minutes).
        while screen.outcome is None:
            await until(
                pilot, lambda: screen.outcome is not None or isinstance(app.screen, BudgetModal)
            )
            if isinstance(app.screen, BudgetModal):
                await pilot.press("f")
                await until(pilot, lambda: not isinstance(app.screen, BudgetModal))
        await app.workers.wait_for_complete()
        await shoot(app, pilot, out, "long-run-compacted")
        await pilot.press("c")
        await until(pilot, is_screen(app, SummaryModal))
        await shoot(app, pilot, out, "long-run-summary")


Picture = Callable[[Path, Path], Awaitable[None]]
PICTURES: list[tuple[tuple[str, ...], Picture]] = [
    (("start-screen-with-pending-decisions",), start_screen),
    (("demo-running-agent-tree", "demo-decision-modal", "help-keys", "demo-finished"), demo),
    (("demo-decision-modal-80x24",), demo_narrow),
    (("decision-queue-similar-requests", "decision-queue-batch-rule"), decision_queue),
    (("budget-offer",), budget_offer),
    (("workspace-changes-diff",), workspace_changes),
    (("processes-running-command",), processes),
    (("run-browser", "run-trace-steps", "run-trace-decisions"), run_browser_and_trace),
    (("tree-100-agents", "tree-100-agents-child-selected"), tree_100),
    (("long-run-compacted", "long-run-summary"), long_run),
]
"""Each entry: the pictures it makes, and the coroutine that drives one app to make them."""


async def in_temporary_dir(picture: Picture, out: Path) -> None:
    with tempfile.TemporaryDirectory(prefix="ioh-shots-") as tmp:
        await picture(out, Path(tmp))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "screenshots"))
    parser.add_argument(
        "--only", nargs="+", default=[], help="make only the pictures whose name has a WORD"
    )
    args = parser.parse_args()
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    for names, picture in PICTURES:
        if args.only and not any(word in name for word in args.only for name in names):
            continue
        started = time.monotonic()
        asyncio.run(in_temporary_dir(picture, out))
        print(f"screenshots: {picture.__name__} took {time.monotonic() - started:.1f}s")


if __name__ == "__main__":
    main()

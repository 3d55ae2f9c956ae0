"""Render the docs pictures in screenshots/ by driving the real app with Pilot.

Runs the built-in demo (a real run against the scripted demo model) and saves SVGs with
`app.save_screenshot`: the start screen, the run mid-way, the decision modal (wide and 80x24), the
help screen and the finished run. Each SVG is also converted to PNG when a converter is installed
(`rsvg-convert`, or the `cairosvg` package); SVG alone is fine.

Usage: python scripts/screenshots.py [--out DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # run from a checkout without installing


async def until(pilot: Any, predicate: Callable[[], bool], within: float = 90.0) -> None:
    """Let the app work until `predicate` holds."""
    deadline = asyncio.get_running_loop().time() + within
    while not predicate():
        if asyncio.get_running_loop().time() > deadline:
            raise SystemExit("screenshots: the app did not reach the expected state in time")
        await pilot.pause(0.05)


def save(app: Any, out: Path, name: str) -> Path:
    """One SVG (and its PNG when possible)."""
    svg = Path(app.save_screenshot(f"{name}.svg", path=str(out)))
    to_png(svg)
    print(f"screenshots: {svg.relative_to(out.parent) if out.parent in svg.parents else svg}")
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


async def demo_pictures(out: Path, size: tuple[int, int], prefix: str, *, full: bool) -> None:
    """Drive one demo run: pictures mid-run, at the modal, and (when `full`) at the end."""
    from ioh_tui.tui.factory import make_app
    from ioh_tui.tui.screens.approval import ApprovalModal
    from ioh_tui.tui.screens.help import HelpScreen

    with tempfile.TemporaryDirectory(prefix="ioh-shots-") as tmp:
        app = make_app(Path(tmp) / "store.db", mode="demo")
        app.animation_level = "none"
        async with app.run_test(size=size) as pilot:
            screen = app.run_screen
            assert screen is not None
            if full:
                await until(pilot, lambda: screen.totals.step >= 3 and screen.gate.attempts >= 1)
                await pilot.pause(0.3)
                save(app, out, f"{prefix}running")
            await until(pilot, lambda: isinstance(app.screen, ApprovalModal))
            await pilot.pause(0.3)
            for widget in app.screen.query("Input, TextArea"):
                widget.cursor_blink = False  # type: ignore[attr-defined]
            save(app, out, f"{prefix}decision")
            if not full:
                return
            await pilot.press("f1")
            await until(pilot, lambda: isinstance(app.screen, HelpScreen))
            await pilot.pause(0.2)
            save(app, out, f"{prefix}help")
            await pilot.press("escape", "y")
            await until(pilot, lambda: screen.outcome is not None)
            await pilot.pause(0.5)
            save(app, out, f"{prefix}finished")


async def start_picture(out: Path) -> None:
    """The start screen over an empty store."""
    from ioh_tui.tui.factory import make_app

    with tempfile.TemporaryDirectory(prefix="ioh-shots-") as tmp:
        app = make_app(Path(tmp) / "store.db", mode="start")
        async with app.run_test(size=(120, 40)) as pilot:
            await app.workers.wait_for_complete()
            await pilot.pause()
            save(app, out, "start")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "screenshots"))
    out = Path(parser.parse_args().out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    asyncio.run(start_picture(out))
    asyncio.run(demo_pictures(out, (120, 40), "demo-", full=True))
    asyncio.run(demo_pictures(out, (80, 24), "demo-80x24-", full=False))


if __name__ == "__main__":
    main()

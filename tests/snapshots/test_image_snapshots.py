"""SVG snapshot of an attached image drawn under its call (half blocks: no terminal to ask)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from PIL import Image as Pil
from textual.pilot import Pilot

from ioh_tui.providers import ScriptedProvider
from ioh_tui.providers.testing.scenario import parse_scenario
from ioh_tui.tui.widgets.image_view import ImageShelf
from ioh_tui.tui.widgets.tool_call import ToolCall
from tests.tui.harness import build, finished, run_screen, until

SnapCompare = Callable[..., bool]
SIZE = (100, 30)

pytestmark = pytest.mark.snapshot


async def drawn(pilot: Pilot[Any]) -> None:
    """The run is over, the image is drawn, and its call has the focus."""
    await finished(pilot)
    screen = run_screen(pilot.app)  # type: ignore[arg-type]
    shelf = screen.query_one(ImageShelf)
    await until(pilot, lambda: shelf.drawn == 1)
    screen.query_one(ToolCall).focus()
    await pilot.pause()


class TestImages:
    def test_a_viewed_image_under_its_call(self, snap_compare: SnapCompare, tmp_path: Path) -> None:
        """You should see `✓ view_image chart.png`, its line `▣ image chart.png: ... 64x32
        (image/png)`, and under it the image in half blocks, eight rows tall and 32 columns wide:
        a red left half, a blue right half with a white diagonal stripe; `i Image` in the key
        bar (the call has the focus)."""
        (tmp_path / "project").mkdir()
        image = Pil.new("RGB", (64, 32), (220, 30, 30))
        image.paste((30, 30, 220), (32, 0, 64, 32))
        for x in range(32, 64):
            for y in range(max(0, x - 36), min(32, x - 28)):
                image.putpixel((x, y), (255, 255, 255))
        image.save(tmp_path / "project" / "chart.png")
        look = {"name": "view_image", "arguments": {"path": "chart.png"}}
        provider = ScriptedProvider(
            parse_scenario(
                {"model": "claude-sonnet-4", "turns": [{"tool_calls": [look]}, {"text": "seen"}]}
            )
        )
        app = build(tmp_path, provider=provider, criterion=None)
        assert snap_compare(app, terminal_size=SIZE, run_before=drawn)

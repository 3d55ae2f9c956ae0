"""An attached image drawn under its call (the `graphics` extra), its full-size view, its text."""

from __future__ import annotations

import asyncio
import base64
import itertools
import sys
from pathlib import Path
from typing import Any

import pytest
from PIL import Image as Pil
from textual.widget import Widget
from textual.widgets import Static

from ioh_tui.core.transcript import Image, Message
from ioh_tui.engine import NewRun, TaskContract
from ioh_tui.policy import Policy
from ioh_tui.providers import ScriptedProvider
from ioh_tui.providers.testing.scenario import parse_scenario
from ioh_tui.sandbox import select
from ioh_tui.store import StepCommit, Store
from ioh_tui.tui import pictures
from ioh_tui.tui.app import IohApp
from ioh_tui.tui.app_run import AppRun
from ioh_tui.tui.factory import make_app
from ioh_tui.tui.pictures import cells
from ioh_tui.tui.screens.image import ImageModal
from ioh_tui.tui.screens.run import RunScreen
from ioh_tui.tui.widgets import image_view
from ioh_tui.tui.widgets.image_view import HINT, THUMB_ROWS, ImageShelf, graphics
from ioh_tui.tui.widgets.tool_call import ToolCall
from tests.integration.mcp.servers import gone, marker, stdio_spec
from tests.integration.tools.test_view_video import BLUE, COLOURS, GREEN, RED, WHITE, video
from tests.tui.harness import build, calc_project, finished, run_screen, until

SIZE = (100, 30)


def chart(path: Path) -> bytes:
    """A 64x32 PNG: red on the left, blue on the right."""
    image = Pil.new("RGB", (64, 32), (220, 30, 30))
    image.paste((30, 30, 220), (32, 0, 64, 32))
    image.save(path)
    return path.read_bytes()


def broken(path: Path) -> None:
    """A PNG header (so `view_image` sends it) over bytes no decoder reads."""
    header = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + (8).to_bytes(4, "big") * 2
    path.write_bytes(header + b"\x08\x02\x00\x00\x00" + b"\xde\xad" * 40)


def seeing(*turns: dict[str, Any]) -> ScriptedProvider:
    """A scripted model that takes images, playing these turns and then saying it has seen."""
    return ScriptedProvider(
        parse_scenario({"model": "claude-sonnet-4", "turns": [*turns, {"text": "seen"}]})
    )


def looks(tmp_path: Path, *paths: str, steps: int = 1, **args: Any) -> IohApp:
    """The app over a run whose model (one that takes images) looks at `paths`."""
    look = [{"name": "view_image", "arguments": {"path": p, **args}} for p in paths]
    turns = [{"tool_calls": look}] if steps == 1 else [{"tool_calls": [c]} for c in look]
    return build(tmp_path, provider=seeing(*turns), criterion=None)


def colours_of(thumb: Widget) -> set[tuple[int, int, int] | None]:
    """The colours of a drawn image's middle row (the upper pixel of each half block)."""
    row = thumb.render_line(thumb.size.height // 2)
    return {s.style.color.triplet if s.style and s.style.color else None for s in row}


def line(name: str, size: int, dims: str) -> str:
    return f"▣ image {name}: {size:,} bytes, {dims} (image/png)"


def lines_of(shelf: ImageShelf) -> str:
    return str(shelf.query_one(".image-lines", Static).render())


async def test_a_viewed_image_is_drawn_under_its_call_and_opens_at_the_panes_size(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    data = chart(project / "chart.png")
    broken(project / "broken.png")
    drawing = graphics()
    assert drawing is not None  # the test extra installs textual-image
    app = looks(tmp_path, "chart.png", "broken.png")
    async with app.run_test(size=SIZE) as pilot:
        await finished(pilot)
        first, second = run_screen(app).query(ToolCall)
        shelf, spoilt = first.query_one(ImageShelf), second.query_one(ImageShelf)
        await until(pilot, lambda: shelf.drawn == 1)
        (thumb,) = shelf.query(".image-thumb")
        # Eight rows tall (cells twice as tall as wide: 64x32 pixels take 32 columns), and
        # the text line stays above it.
        assert type(thumb) is drawing.widget
        assert (thumb.size.width, thumb.size.height) == (32, THUMB_ROWS)
        # Drawn in half blocks here (no terminal to ask): red on the left, blue on the right.
        row = [(seg.text, seg.style) for seg in thumb.render_line(0) if seg.text.strip()]
        assert [text for text, _ in row] == ["▀"] * 32
        colours = [style.color.triplet if style and style.color else None for _, style in row]
        assert set(colours[:14]) == {(220, 30, 30)} and set(colours[-14:]) == {(30, 30, 220)}
        assert lines_of(shelf) == line("chart.png", len(data), "64x32")
        # Bytes no decoder reads: the text line, no image, no traceback, the app goes on.
        await app.workers.wait_for_complete()
        assert spoilt.drawn == 0 and not spoilt.query(".image-thumb")
        assert lines_of(spoilt).startswith("▣ image broken.png:")
        # The image's bytes never reach the screen as text.
        assert base64.b64encode(data)[:24].decode() not in app.export_screenshot()

        first.focus()
        await pilot.press("i")
        await until(pilot, lambda: isinstance(app.screen, ImageModal))
        modal = app.screen
        assert isinstance(modal, ImageModal)
        await until(pilot, lambda: bool(modal.query(".image-full")))
        full = modal.query_one(".image-full")
        frame = modal.query_one("#image-frame").content_size
        # As large as the frame allows, its shape kept.
        want = cells(64, 32, cols=frame.width, rows=frame.height, aspect=drawing.aspect)
        assert (full.size.width, full.size.height) == want
        assert want[0] == frame.width or want[1] == frame.height
        assert want[0] > 32
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, RunScreen))
        assert app.screen is run_screen(app)


async def test_without_the_extra_images_stay_text_and_the_hint_is_said_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # textual-image cannot be imported in this process: the extra is missing.
    monkeypatch.setitem(sys.modules, "textual_image", None)
    monkeypatch.setattr(image_view, "_loaded", "unloaded")
    project = tmp_path / "project"
    project.mkdir()
    one, two = chart(project / "one.png"), chart(project / "two.png")
    app = looks(tmp_path, "one.png", "two.png", steps=2)
    async with app.run_test(size=SIZE) as pilot:
        await finished(pilot)
        first, second = run_screen(app).query(ToolCall)
        await pilot.pause()
        shelves = [first.query_one(ImageShelf), second.query_one(ImageShelf)]
        assert [lines_of(s) for s in shelves] == [
            f"{line('one.png', len(one), '64x32')}\n{HINT}",
            line("two.png", len(two), "64x32"),
        ]
        assert "ioh-tui[graphics]" in HINT
        assert not app.query(".image-thumb")
        # Nothing to open at full size: `i` is not offered.
        first.focus()
        await pilot.pause()
        assert "open_image" not in {b.binding.action for b in app.screen.active_bindings.values()}
        await pilot.press("i")
        await pilot.pause()
        assert isinstance(app.screen, RunScreen)


@pytest.mark.parametrize(
    ("size", "box", "fits"),
    [
        ((64, 32), (80, 8), (32, 8)),  # eight rows tall, twice as wide in cells as in rows
        ((640, 32), (80, 8), (80, 2)),  # too wide: the width caps it, the rows shrink
        ((32, 640), (80, 8), (1, 8)),
        ((0, 10), (80, 8), (0, 0)),
    ],
)
def test_an_image_keeps_its_shape_in_cells(
    size: tuple[int, int], box: tuple[int, int], fits: tuple[int, int]
) -> None:
    assert cells(*size, cols=box[0], rows=box[1], aspect=2.0) == fits


async def test_past_the_limit_the_oldest_images_go_back_to_text_and_still_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pictures, "KEEP_DRAWN", 1)
    project = tmp_path / "project"
    project.mkdir()
    chart(project / "one.png")
    chart(project / "two.png")
    app = looks(tmp_path, "one.png", "two.png", steps=2)
    async with app.run_test(size=SIZE) as pilot:
        await finished(pilot)
        first, second = run_screen(app).query(ToolCall)
        older, newer = first.query_one(ImageShelf), second.query_one(ImageShelf)
        await until(pilot, lambda: newer.drawn == 1)
        await pilot.pause()
        assert older.drawn == 0 and not older.query(".image-thumb")
        assert lines_of(older).startswith("▣ image one.png:")
        # The store still has it: the full-size view reads it there.
        first.focus()
        await pilot.press("i")
        await until(pilot, lambda: bool(app.screen.query(".image-full")))
        assert isinstance(app.screen, ImageModal)
        assert "one.png" in str(app.screen.query_one("#image-heading", Static).render())


async def test_a_videos_stills_are_drawn_side_by_side_in_time_order(tmp_path: Path) -> None:
    (tmp_path / "project").mkdir()
    (tmp_path / "project" / "clip.mp4").write_bytes(video(COLOURS))
    app = looks(tmp_path, "clip.mp4", frames=4)
    async with app.run_test(size=SIZE) as pilot:
        await finished(pilot)
        shelf = run_screen(app).query_one(ImageShelf)
        await until(pilot, lambda: shelf.drawn == 4)
        thumbs = list(shelf.query(".image-thumb"))
        # Side by side within the pane (narrower than eight rows would make them: shorter).
        assert len({thumb.region.y for thumb in thumbs}) == 1
        assert all(a.region.right < b.region.x for a, b in itertools.pairwise(thumbs))
        assert thumbs[-1].region.right <= shelf.region.right
        assert len({thumb.size for thumb in thumbs}) == 1 and thumbs[0].size.height <= THUMB_ROWS
        # A still from each half second: red, green, blue, white (H.264 moves them a little).
        assert [nearest(colours_of(thumb)) for thumb in thumbs] == [RED, GREEN, BLUE, WHITE]
        assert len(lines_of(shelf).splitlines()) == 4


def nearest(colours: set[tuple[int, int, int] | None]) -> tuple[int, int, int]:
    """The one of red, green, blue and white that every colour drawn is closest to."""

    def to(colour: tuple[int, int, int]) -> tuple[int, int, int]:
        return min(
            (RED, GREEN, BLUE, WHITE),
            key=lambda named: sum(abs(a - b) for a, b in zip(named, colour, strict=True)),
        )

    (closest,) = {to(c) for c in colours if c is not None}
    return closest


@pytest.mark.slow  # the MCP SDK's server starts in seconds under a loaded machine
async def test_an_mcp_results_image_is_drawn_under_its_call(tmp_path: Path) -> None:
    tag = marker()
    run = AppRun(
        NewRun(TaskContract.workspace("look", calc_project(tmp_path / "project"))),
        seeing({"tool_calls": [{"name": "mcp__fx__photo", "arguments": {}}]}),
        Policy.permissive(),
        select("floor"),
        label="scripted test model",
        mcp=(stdio_spec(tag=tag),),
    )
    app = make_app(tmp_path / "store.db", run, remember_file=tmp_path / "remembered.toml")
    app.animation_level = "none"
    async with app.run_test(size=SIZE) as pilot:
        await finished(pilot)
        shelf = run_screen(app).query_one(ImageShelf)
        await until(pilot, lambda: shelf.drawn == 1)
        (thumb,) = shelf.query(".image-thumb")
        # The fixture's grey 3x2 PNG: 24 columns by 8 rows, grey throughout.
        assert (thumb.size.width, thumb.size.height) == (24, THUMB_ROWS)
        assert colours_of(thumb) == {(128, 128, 128)}
        assert lines_of(shelf).startswith("▣ image fx/photo image 1:")
    assert gone(tag)


async def test_a_reader_waits_for_its_steps_commit_or_the_runs_end(tmp_path: Path) -> None:
    image = Image("image/png", chart(tmp_path / "chart.png"), "chart.png", 64, 32)
    async with Store.open(tmp_path / "store.db") as store:
        run = await store.start_run(
            goal="look",
            mode="workspace",
            root=str(tmp_path),
            subject=None,
            contract={"goal": "look"},
            provider="scripted",
            model="m",
            sandbox="floor",
        )
        album = pictures.Album(tmp_path / "store.db")
        waiting = asyncio.create_task(album.at(run, 1, "c1").images())
        shown = Message("tool", "seen", tool_call_id="c1", images=(image,))
        await store.commit_step(StepCommit(run, 1, "", "", 0, 0, None, [shown], []))
        await asyncio.sleep(0)  # it runs up to its wait, and no further
        assert not waiting.done()  # committed, but the engine has not said so yet
        album.commit(run, 1)
        assert await waiting == (image,)
        # A step never committed (the run was cancelled in it): read once the run ends.
        never = asyncio.create_task(album.at(run, 2, "c1").images())
        await asyncio.sleep(0)  # it runs up to its wait, and no further
        assert not never.done()
        album.close()
        assert await never == ()

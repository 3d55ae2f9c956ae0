"""view_image on videos made in the test with PyAV: stills decoded by the worker in the sandbox,
in time order with the right colours and times, scaled to the limits; a corrupt video, a text-only
model and a missing PyAV each get one line."""

from __future__ import annotations

import io
import os
import sys
from pathlib import Path

import av
import pytest
from PIL import Image as Pil

from ioh_tui.policy import Policy
from ioh_tui.sandbox import select
from ioh_tui.tools import ToolContext, ToolSet
from ioh_tui.tools.base import ToolResult
from ioh_tui.tools.families import VIEW_IMAGE
from ioh_tui.tools.video import _still
from ioh_tui.tools.vision import ANTHROPIC, Vision
from ioh_tui.tui.widgets.tool_call import _IMAGE
from tests.unit.tools.context import context

RED, GREEN, BLUE, WHITE = (255, 0, 0), (0, 255, 0), (0, 0, 255), (255, 255, 255)
COLOURS = [RED, RED, GREEN, GREEN, BLUE, BLUE, WHITE, WHITE]
"""Eight frames at 4 fps: two seconds, a colour each half second."""
TOOLS = ToolSet((VIEW_IMAGE,))


def video(
    colours: list[tuple[int, int, int]], size: tuple[int, int] = (64, 48), form: str = "mp4"
) -> bytes:
    """H.264 at 4 frames a second, one solid colour a frame (PyAV's bundled x264)."""
    out = io.BytesIO()
    with av.open(out, "w", format=form) as container:
        stream = container.add_stream("libx264", rate=4)
        stream.width, stream.height, stream.pix_fmt = size[0], size[1], "yuv420p"
        for i, colour in enumerate(colours):
            pixels = bytes((*colour, 255)) * (size[0] * size[1])
            frame = av.VideoFrame.from_bytes(pixels, size[0], size[1], "rgba")
            frame.pts = i
            container.mux(stream.encode(frame))
        container.mux(stream.encode(None))
    return out.getvalue()


@pytest.fixture(scope="module")
def clip() -> bytes:
    return video(COLOURS)


@pytest.fixture(scope="module")
def stream() -> bytes:
    """The same as an MPEG-TS: no index, its times start at 1.4 s, one key frame in all."""
    return video(COLOURS, form="mpegts")


def ctx_on(
    root: Path, vision: Vision | None = ANTHROPIC, policy: Policy | None = None, model: str = "m"
) -> ToolContext:
    ctx = context(root, policy, vision=vision, model=model)
    ctx.sandbox = select("auto")  # the worker decodes in the real sandbox
    return ctx


async def look(ctx: ToolContext, path: str, **args: object) -> ToolResult:
    return await TOOLS.dispatch("view_image", {"path": path, **args}, ctx)


def colour_of(data: bytes) -> tuple[int, int, int]:
    with Pil.open(io.BytesIO(data)) as still:
        assert still.format == "JPEG"
        r, g, b = still.convert("RGB").getpixel((still.width // 2, still.height // 2))  # type: ignore[misc]
    return r, g, b


def near(got: tuple[int, int, int], want: tuple[int, int, int]) -> bool:
    return all(abs(a - b) <= 16 for a, b in zip(got, want, strict=True))


@pytest.mark.parametrize("form", ["mp4", "ts"])
async def test_evenly_spaced_stills_in_order_with_colours_and_times(
    tmp_path: Path, clip: bytes, stream: bytes, form: str
) -> None:
    # A seek in the MPEG-TS lands on no key frame: the worker decodes from the start instead.
    (tmp_path / "clip.mp4").write_bytes(clip if form == "mp4" else stream)
    result = await look(ctx_on(tmp_path), "clip.mp4")
    assert result.ok, result.output
    # The middles of four equal parts of two seconds: one frame of each colour.
    names = [image.name for image in result.images]
    assert names == [f"clip.mp4 at {t} s" for t in ("0.25", "0.75", "1.25", "1.75")]
    for image, want in zip(result.images, (RED, GREEN, BLUE, WHITE), strict=True):
        assert (image.media_type, image.width, image.height) == ("image/jpeg", 64, 48)
        assert near(colour_of(image.data), want), (image.name, colour_of(image.data))
    head, *lines = result.output.splitlines()
    assert head == (
        "[view_image clip.mp4] a video (h264, 64x48, 2.00 s, 4 fps): 4 still frames, in time "
        "order; you see these stills, not the moving video"
    )
    assert lines[0] == f"0.25 s: shown to you as {result.images[0].describe()}"
    # The app finds each still on its line as it finds an image.
    assert [m[0] for m in _IMAGE.findall(result.output)] == names


async def test_stills_at_asked_times_scaled_to_the_limits(tmp_path: Path) -> None:
    (tmp_path / "wide.mp4").write_bytes(video(COLOURS, (320, 240)))
    tight = Vision(160, 100_000, "tight")
    result = await look(ctx_on(tmp_path, tight), "wide.mp4", at=[1.0, 0, 1.0])
    assert result.ok, result.output
    assert [i.name for i in result.images] == ["wide.mp4 at 0.00 s", "wide.mp4 at 1.00 s"]
    assert [(i.width, i.height) for i in result.images] == [(160, 120), (160, 120)]
    assert near(colour_of(result.images[0].data), RED)
    assert near(colour_of(result.images[1].data), BLUE)
    past = await look(ctx_on(tmp_path), "wide.mp4", at=[9])
    assert past.output == "[view_image wide.mp4 error] wide.mp4: 9 s is past its end (2.00 s)"


async def test_a_phones_portrait_video_gives_upright_stills(tmp_path: Path) -> None:
    """Stored on its side (64x48, white on the left) with a display matrix turning it a quarter
    clockwise, as a phone held upright records: the still is 48x64, white on top."""
    out = io.BytesIO()
    with av.open(out, "w", format="mp4") as container:
        stream = container.add_stream("libx264", rate=4)
        stream.width, stream.height, stream.pix_fmt = 64, 48, "yuv420p"
        stream.set_display_rotation(-90)
        row = bytes((*WHITE, 255)) * 32 + bytes((0, 0, 0, 255)) * 32
        for i in range(4):
            frame = av.VideoFrame.from_bytes(row * 48, 64, 48, "rgba")
            frame.pts = i
            container.mux(stream.encode(frame))
        container.mux(stream.encode(None))
    (tmp_path / "phone.mp4").write_bytes(out.getvalue())
    result = await look(ctx_on(tmp_path), "phone.mp4", frames=1)
    assert result.ok, result.output
    (image,) = result.images
    assert (image.width, image.height) == (48, 64)
    assert "a video (h264, 48x64, 1.00 s" in result.output
    with Pil.open(io.BytesIO(image.data)) as still:
        assert still.size == (48, 64)
        top, bottom = still.convert("L").getpixel((24, 6)), still.convert("L").getpixel((24, 58))
    assert top > 200 > 60 > bottom  # type: ignore[operator]


async def test_a_corrupt_video_is_one_line(tmp_path: Path, clip: bytes) -> None:
    (tmp_path / "bad.mp4").write_bytes(clip[:32] + bytes(range(256)) * 8)
    result = await look(ctx_on(tmp_path), "bad.mp4", frames=2)
    assert not result.ok and not result.images
    assert result.output.startswith("[view_image bad.mp4 error] bad.mp4: FFmpeg cannot read it")
    assert "\n" not in result.output and "ioh-video" not in result.output  # not the worker's copy


async def test_a_text_only_model_is_told_and_nothing_is_decoded(
    tmp_path: Path, clip: bytes
) -> None:
    (tmp_path / "clip.mp4").write_bytes(clip)
    result = await look(ctx_on(tmp_path, None, model="gpt-3.5-turbo"), "clip.mp4")
    assert result.refused and not result.images
    assert result.output.startswith(
        "[view_image clip.mp4 refused] the model gpt-3.5-turbo is not known to accept images"
    )


async def test_without_pyav_the_extra_is_named(
    tmp_path: Path, clip: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "clip.mov").write_bytes(clip)
    monkeypatch.setitem(sys.modules, "av", None)  # found by no import: as if not installed
    result = await look(ctx_on(tmp_path), "clip.mov")
    assert result.output == (
        "[view_image clip.mov error] clip.mov is a video (ISO media (MP4, MOV, M4V, 3GP)); "
        "sampling its frames needs PyAV: pip install 'ioh-tui[video]'"
    )


async def test_the_read_policy_and_the_arguments_are_checked(tmp_path: Path, clip: bytes) -> None:
    (tmp_path / "secret.mp4").write_bytes(clip)
    (tmp_path / "still.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(16))
    policy = Policy.permissive().layer("team").deny_read("secret.mp4")
    ctx = ctx_on(tmp_path, policy=policy)
    denied = await look(ctx, "secret.mp4")
    assert denied.refused and not denied.images and "secret.mp4" in denied.output
    both = await look(ctx, "still.png", frames=2, at=[1])
    assert both.output == "[view_image error] give frames (a count) or at (times), not both"
    image = await look(ctx, "still.png", frames=2)
    assert image.output.endswith("frames and at choose a video's stills; still.png is an image")


def test_the_workers_stills_are_not_followed_through_links_or_fifos(tmp_path: Path) -> None:
    # A worker that a hostile video took over could name a link to a private picture, or a FIFO
    # that would block the harness: neither is read.
    out = io.BytesIO()
    Pil.new("RGB", (8, 8), RED).save(out, "JPEG")
    (tmp_path / "private.jpg").write_bytes(out.getvalue())
    folder = tmp_path / "worker"
    folder.mkdir()
    (folder / "still-0.jpg").symlink_to(tmp_path / "private.jpg")
    os.mkfifo(folder / "still-1.jpg")
    (folder / "still-2.jpg").write_bytes(out.getvalue())
    with pytest.raises(OSError, match="Too many levels of symbolic links"):  # not followed
        _still(folder, "v.mp4", {"file": "still-0.jpg", "at": 0}, ANTHROPIC)
    with pytest.raises(OSError, match="not a regular file"):
        _still(folder, "v.mp4", {"file": "still-1.jpg", "at": 0}, ANTHROPIC)
    at, image = _still(folder, "v.mp4", {"file": "../still-2.jpg", "at": 0.5}, ANTHROPIC)
    assert (at, image.name, image.width) == (0.5, "v.mp4 at 0.50 s", 8)

"""view_image on real files: recognised by their bytes, sized from their headers, scaled past the
provider's limits with Pillow, refused for a text-only model, checked by the policy."""

from __future__ import annotations

import io
import struct
import sys
import zlib
from pathlib import Path

import pytest
from PIL import Image as Pil

from ioh_tui.policy import Policy
from ioh_tui.tools.images import dimensions, orientation, sniff
from ioh_tui.tools.view import view_image
from ioh_tui.tools.vision import ANTHROPIC, OPENAI, Vision, accepts_images, vision_of
from ioh_tui.tools.workspace import Escape
from tests.unit.tools.context import context


def picture(size: tuple[int, int], form: str, mode: str = "RGB") -> bytes:
    """An image of `size` in `form` (PNG, JPEG, GIF, WEBP), drawn with a gradient."""
    image = Pil.linear_gradient("L").resize(size).convert(mode)
    out = io.BytesIO()
    image.save(out, form, **({"lossless": True} if form == "WEBP" else {}))
    return out.getvalue()


@pytest.mark.parametrize(
    ("form", "media_type", "mode"),
    [
        ("PNG", "image/png", "RGB"),
        ("JPEG", "image/jpeg", "RGB"),
        ("GIF", "image/gif", "P"),
        ("WEBP", "image/webp", "RGB"),
        ("WEBP", "image/webp", "RGBA"),
    ],
)
def test_kind_from_bytes_and_size_from_header(form: str, media_type: str, mode: str) -> None:
    data = picture((321, 123), form, mode)
    assert sniff(data) == media_type
    assert dimensions(data, media_type) == (321, 123)


def test_lossy_webp_size_too() -> None:
    out = io.BytesIO()
    Pil.linear_gradient("L").resize((200, 90)).convert("RGB").save(out, "WEBP", quality=50)
    assert dimensions(out.getvalue(), "image/webp") == (200, 90)


async def test_an_image_within_the_limits_is_sent_as_read(tmp_path: Path) -> None:
    data = picture((64, 48), "PNG")
    (tmp_path / "shot.bin").write_bytes(data)  # the name says nothing: the bytes do
    result = await view_image({"path": "shot.bin"}, context(tmp_path, vision=ANTHROPIC))
    assert result.ok, result.output
    (image,) = result.images
    assert (image.media_type, image.data, image.width, image.height) == ("image/png", data, 64, 48)
    assert result.output == (
        f"[view_image shot.bin] shown to you as shot.bin (image/png, {len(data):,} bytes, 64x48)"
    )


async def test_a_large_image_is_scaled_below_the_limits(tmp_path: Path) -> None:
    (tmp_path / "big.png").write_bytes(picture((3000, 1200), "PNG"))
    result = await view_image({"path": "big.png"}, context(tmp_path, vision=ANTHROPIC))
    (image,) = result.images
    assert (image.width, image.height) == (1568, 627)
    assert len(image.data) <= ANTHROPIC.max_bytes
    with Pil.open(io.BytesIO(image.data)) as sent:
        assert sent.size == (1568, 627)
    assert "shown to you as big.png (image/jpeg" in result.output
    assert ", 1568x627); scaled from 3000x1200" in result.output


async def test_too_many_bytes_alone_is_scaled_until_it_fits(tmp_path: Path) -> None:
    noise = Pil.effect_noise((900, 900), 120).convert("RGB")
    out = io.BytesIO()
    noise.save(out, "PNG")
    (tmp_path / "noise.png").write_bytes(out.getvalue())
    tight = Vision(1568, 200_000, "tight")
    result = await view_image({"path": "noise.png"}, context(tmp_path, vision=tight))
    (image,) = result.images
    assert len(image.data) <= 200_000 < len(out.getvalue())


async def test_without_pillow_an_image_over_the_limits_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    small, big = picture((100, 80), "JPEG"), picture((2100, 100), "PNG")
    monkeypatch.setitem(sys.modules, "PIL", None)  # `import PIL` now fails as if not installed
    (tmp_path / "small.jpg").write_bytes(small)
    (tmp_path / "big.png").write_bytes(big)
    ctx = context(tmp_path, vision=OPENAI)
    sent = await view_image({"path": "small.jpg"}, ctx)
    assert sent.images[0].data == small
    refused = await view_image({"path": "big.png"}, ctx)
    assert not refused.ok and not refused.images
    assert "pip install 'ioh-tui[images]'" in refused.output
    assert "2100x100" in refused.output and "2048 px" in refused.output


async def test_a_text_only_model_is_told_and_nothing_is_read(tmp_path: Path) -> None:
    (tmp_path / "a.png").write_bytes(picture((10, 10), "PNG"))
    policy = Policy.permissive().layer("team").deny_read("a.png")
    result = await view_image({"path": "a.png"}, context(tmp_path, policy, model="gpt-3.5-turbo"))
    assert result.refused and not result.images
    assert result.output.startswith(
        "[view_image a.png refused] the model gpt-3.5-turbo is not known to accept images"
    )


async def test_the_read_policy_and_confinement_apply(tmp_path: Path) -> None:
    (tmp_path / "secret.png").write_bytes(picture((10, 10), "PNG"))
    (tmp_path / "out.png").symlink_to("/etc/hostname")
    (tmp_path / "notes.txt").write_text("not a picture")
    policy = Policy.permissive().layer("team").deny_read("secret.png")
    ctx = context(tmp_path, policy, vision=ANTHROPIC)
    denied = await view_image({"path": "secret.png"}, ctx)
    assert denied.refused and not denied.images and "secret.png" in denied.output
    with pytest.raises(Escape, match="resolves outside the workspace"):  # as read_file: refused
        await view_image({"path": "out.png"}, ctx)
    text = await view_image({"path": "notes.txt"}, ctx)
    assert text.output.startswith("[view_image notes.txt error] notes.txt is not a PNG, JPEG")
    missing = await view_image({"path": "gone.png"}, ctx)
    assert missing.output == "[view_image gone.png error] no such file"


def test_the_capability_table(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("IOH_TUI_VISION", raising=False)
    sees = ("gpt-4o-mini", "gpt-4.1", "gpt-5-mini", "claude-sonnet-4-5", "o3")
    for model in (*sees, "anthropic/claude-3-5-haiku", "google/gemini-2.5-pro"):
        assert accepts_images(model), model
    for blind in ("gpt-3.5-turbo", "o3-mini", "claude-2.1", "deepseek-chat", "llama3", None):
        assert not accepts_images(blind), blind
    monkeypatch.setenv("IOH_TUI_VISION", "1")
    assert accepts_images("llama3")
    monkeypatch.setenv("IOH_TUI_VISION", "0")
    assert not accepts_images("gpt-4o")


def test_limits_by_provider_and_the_strictest_of_a_chain(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("IOH_TUI_VISION", raising=False)

    class Link:
        def __init__(self, name: str, model: str) -> None:
            self.name, self.model = name, model

    class Chain:
        name, model = "openai -> anthropic", "gpt-4o"

        def __init__(self, *links: Link) -> None:
            self.providers = links

    assert vision_of(Link("openai", "gpt-4o")) == OPENAI
    assert vision_of(Link("anthropic", "claude-opus-4")) == ANTHROPIC
    assert vision_of(Link("openrouter", "openai/gpt-4o")) == ANTHROPIC
    assert vision_of(Chain(Link("openai", "gpt-4o"), Link("anthropic", "claude-opus-4"))) == (
        ANTHROPIC
    )
    assert vision_of(Chain(Link("openai", "gpt-4o"), Link("compatible", "llama3"))) is None


async def test_a_header_past_100_megapixels_is_never_decoded(tmp_path: Path) -> None:
    header = struct.pack(">IIBBBBB", 20_000, 20_000, 8, 2, 0, 0, 0)
    crc = struct.pack(">I", zlib.crc32(b"IHDR" + header))
    (tmp_path / "bomb.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + header + crc)
    result = await view_image({"path": "bomb.png"}, context(tmp_path, vision=ANTHROPIC))
    assert not result.images
    assert "20000x20000" in result.output and "too many pixels to scale" in result.output


async def test_an_animated_gif_over_the_limits_is_sent_as_its_first_frame(tmp_path: Path) -> None:
    frames = [Pil.new("RGB", (2000, 100), colour) for colour in ("red", "blue")]
    frames[0].save(tmp_path / "a.gif", save_all=True, append_images=frames[1:], duration=100)
    result = await view_image({"path": "a.gif"}, context(tmp_path, vision=ANTHROPIC))
    (image,) = result.images
    with Pil.open(io.BytesIO(image.data)) as sent:
        assert sent.size == (1568, 78) and getattr(sent, "n_frames", 1) == 1
        red, _, blue = sent.convert("RGB").getpixel((10, 10))  # type: ignore[misc]
    assert red > 200 and blue < 60


def sideways(size: tuple[int, int], turn: int) -> bytes:
    """A JPEG stored at `size`, white on its left half and black on its right, whose EXIF says
    how the camera was held (`turn`: 6 means shown turned a quarter clockwise)."""
    image = Pil.new("RGB", size, "black")
    image.paste((255, 255, 255), (0, 0, size[0] // 2, size[1]))
    exif = Pil.Exif()
    exif[0x0112] = turn
    out = io.BytesIO()
    image.save(out, "JPEG", exif=exif)
    return out.getvalue()


def test_the_exif_orientation_is_read_from_the_bytes() -> None:
    assert orientation(sideways((30, 10), 6)) == 6
    assert orientation(sideways((30, 10), 3)) == 3
    assert orientation(picture((30, 10), "JPEG")) == 1  # no EXIF: upright
    # Big-endian ("MM") as cameras write it: one directory entry, Orientation = 8.
    tiff = (
        b"MM\x00\x2a\x00\x00\x00\x08"
        + b"\x00\x01"
        + b"\x01\x12\x00\x03\x00\x00\x00\x01\x00\x08\x00\x00"
    )
    app1 = b"\xff\xe1" + struct.pack(">H", 2 + 6 + len(tiff)) + b"Exif\x00\x00" + tiff
    assert orientation(b"\xff\xd8" + app1 + picture((30, 10), "JPEG")[2:]) == 8


async def test_a_photo_taken_on_its_side_is_sent_upright(tmp_path: Path) -> None:
    """Orientation 6 (a phone held upright): the stored left edge is the picture's top."""
    (tmp_path / "phone.jpg").write_bytes(sideways((300, 100), 6))
    result = await view_image({"path": "phone.jpg"}, context(tmp_path, vision=ANTHROPIC))
    (image,) = result.images
    assert (image.width, image.height) == (100, 300)
    with Pil.open(io.BytesIO(image.data)) as sent:
        assert sent.size == (100, 300)
        top, bottom = sent.convert("L").getpixel((50, 20)), sent.convert("L").getpixel((50, 280))
    assert top > 200 > 60 > bottom  # type: ignore[operator]
    assert "100x300); turned upright (EXIF orientation 6)" in result.output


async def test_a_large_photo_on_its_side_is_scaled_upright(tmp_path: Path) -> None:
    (tmp_path / "big.jpg").write_bytes(sideways((4000, 3000), 6))
    result = await view_image({"path": "big.jpg"}, context(tmp_path, vision=ANTHROPIC))
    (image,) = result.images
    assert (image.width, image.height) == (1176, 1568)
    with Pil.open(io.BytesIO(image.data)) as sent:
        assert sent.size == (1176, 1568)
        assert sent.convert("L").getpixel((588, 100)) > 200  # type: ignore[operator]
    assert "scaled from 3000x4000" in result.output


async def test_without_pillow_a_photo_on_its_side_is_sent_as_read_with_its_upright_size(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = sideways((300, 100), 6)
    monkeypatch.setitem(sys.modules, "PIL", None)
    (tmp_path / "phone.jpg").write_bytes(data)
    result = await view_image({"path": "phone.jpg"}, context(tmp_path, vision=ANTHROPIC))
    (image,) = result.images
    assert (image.data, image.width, image.height) == (data, 100, 300)

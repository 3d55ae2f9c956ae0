"""Images for the model: recognised by their first bytes, sized, scaled to the provider's limits.

An image (a workspace file `view_image` read, an MCP result's block) is recognised by its first
bytes (PNG, JPEG, GIF, WebP; never by its name) and scaled down with Pillow when it passes the
provider's limits (`tools/vision.py`). Within the limits it is sent as it is, so Pillow (the
`images` extra) is needed only to scale. The image rides on the tool result (`ToolResult.images`);
the provider's wire puts it where the API takes it.
"""

from __future__ import annotations

import io
import struct
from typing import Any

from ioh_tui.core.transcript import Image
from ioh_tui.tools.vision import Vision

EXTRA = "ioh-tui[images]"
SHOWN = "shown to you as"
"""Before `Image.describe()` in an observation that attached an image (the app finds it there)."""
MAX_PIXELS = 100_000_000
"""The most pixels an image may have to be decoded for scaling (a decompression bomb is not)."""
_JPEG_QUALITY = 85


class ImageError(Exception):
    """The file cannot be shown as an image; the message is for the model."""


def sniff(data: bytes) -> str | None:
    """The media type by the first bytes (PNG, JPEG, GIF, WebP), or None."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def dimensions(data: bytes, media_type: str) -> tuple[int, int]:
    """Width and height from the image's header (no decoding, no Pillow).

    Raises:
        ImageError: the header is cut short or holds no size.
    """
    try:
        if media_type == "image/png":
            width, height = struct.unpack(">II", data[16:24])
            return width, height
        if media_type == "image/gif":
            width, height = struct.unpack("<HH", data[6:10])
            return width, height
        if media_type == "image/webp":
            return _webp(data)
        return _jpeg(data)
    except struct.error:
        raise ImageError("its header is cut short") from None


def _webp(data: bytes) -> tuple[int, int]:
    chunk = data[12:16]
    if chunk == b"VP8 ":
        width, height = struct.unpack("<HH", data[26:30])
        return width & 0x3FFF, height & 0x3FFF
    if chunk == b"VP8L":
        (bits,) = struct.unpack("<I", data[21:25])
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8X":
        raw = data[24:30]
        if len(raw) < 6:
            raise struct.error
        return int.from_bytes(raw[:3], "little") + 1, int.from_bytes(raw[3:], "little") + 1
    raise ImageError("its WebP header is not one of VP8, VP8L, VP8X")


def _jpeg(data: bytes) -> tuple[int, int]:
    at = 2
    while at + 4 <= len(data):
        if data[at] != 0xFF:
            raise ImageError("its JPEG markers are malformed")
        marker = data[at + 1]
        if marker == 0xFF:  # fill byte
            at += 1
            continue
        (length,) = struct.unpack(">H", data[at + 2 : at + 4])
        # Start-of-frame markers (C0-CF except DHT C4, JPG C8, DAC CC) hold the size.
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height, width = struct.unpack(">HH", data[at + 5 : at + 9])
            return width, height
        at += 2 + length
    raise ImageError("its JPEG header holds no frame size")


def orientation(data: bytes) -> int:
    """A JPEG's EXIF orientation: 1 upright (or none said), 2-8 as the camera was held.

    Read from the APP1 segment's first directory without Pillow. Phones store a portrait photo
    as a landscape one with orientation 6 or 8: shown as stored, it lies on its side.
    """
    at = 2
    while at + 4 <= len(data) and data[at] == 0xFF:
        marker = data[at + 1]
        if marker in (0xD9, 0xDA):  # end of image, start of scan: no metadata past here
            break
        (length,) = struct.unpack(">H", data[at + 2 : at + 4])
        if marker == 0xE1 and data[at + 4 : at + 10] == b"Exif\0\0":
            return _tiff_orientation(data[at + 10 : at + 2 + length])
        at += 2 + length
    return 1


def _tiff_orientation(tiff: bytes) -> int:
    order = {b"II": "<", b"MM": ">"}.get(tiff[:2])
    if order is None or len(tiff) < 8:
        return 1
    (first,) = struct.unpack(order + "I", tiff[4:8])
    if first + 2 > len(tiff):
        return 1
    (count,) = struct.unpack(order + "H", tiff[first : first + 2])
    for index in range(count):
        entry = tiff[first + 2 + 12 * index : first + 14 + 12 * index]
        if len(entry) < 12:
            break
        tag, kind, _, value = struct.unpack(order + "HHIH", entry[:10])
        if tag == 0x0112 and kind == 3:  # Orientation, a SHORT
            return value if 1 <= value <= 8 else 1
    return 1


def fitted(data: bytes, media_type: str, name: str, vision: Vision) -> tuple[Image, str]:
    """The image as it is sent, and what was done to it (`""`: nothing).

    Within `vision`'s limits and upright it is sent as read. Past them it is scaled down with
    Pillow (an animated GIF by its first frame) until it fits; a JPEG whose EXIF says it was
    taken on its side is turned upright with Pillow (else sent as read, its EXIF saying how).
    Sizes are the image's as it is seen, upright.

    Raises:
        ImageError: it cannot be read, or must be scaled and Pillow is not installed.
    """
    width, height = dimensions(data, media_type)
    if not width or not height:
        raise ImageError(f"its header says it is {width}x{height}")
    turn = orientation(data) if media_type == "image/jpeg" else 1
    if turn >= 5:  # a quarter turn: the picture is as tall as the stored one is wide
        width, height = height, width
    within = max(width, height) <= vision.max_side and len(data) <= vision.max_bytes
    if within and turn == 1:
        return Image(media_type, data, name, width, height), ""
    over = f"{width}x{height}, {len(data):,} bytes, is over the limits ({vision.describe()})"
    if width * height > MAX_PIXELS:
        raise ImageError(f"it {over} and has too many pixels to scale ({MAX_PIXELS:,} at most)")
    try:
        from PIL import Image as Pil
        from PIL import ImageOps
    except ImportError:
        if within:
            return Image(media_type, data, name, width, height), ""
        raise ImageError(
            f"it {over}; scaling it down needs Pillow: pip install '{EXTRA}'"
        ) from None
    image = _scaled(Pil, ImageOps, data, name, vision)
    if within:
        return image, f"turned upright (EXIF orientation {turn})"
    return image, f"scaled from {width}x{height}, {len(data):,} bytes ({vision.describe()})"


def _scaled(pil: Any, ops: Any, data: bytes, name: str, vision: Vision) -> Image:
    side = vision.max_side
    try:
        with pil.open(io.BytesIO(data)) as opened:
            opened.seek(0)
            alpha = _has_alpha(opened)
            # A JPEG is decoded straight at the largest 1/2, 1/4 or 1/8 scale still over the
            # target (libjpeg's draft mode): a fraction of the time for a photograph.
            ratio = min(1.0, side / max(opened.size))
            box = (max(1, round(opened.width * ratio)), max(1, round(opened.height * ratio)))
            opened.draft(opened.mode if alpha else "RGB", box)
            # Upright as its EXIF says (the saved copy carries no EXIF to say it again).
            upright = ops.exif_transpose(opened)
            upright.thumbnail((side, side), pil.Resampling.LANCZOS)
            frame = upright.convert("RGBA" if alpha else "RGB")
    except (OSError, ValueError, pil.DecompressionBombError) as exc:
        raise ImageError(f"Pillow could not decode it: {exc}") from None
    while True:
        out = io.BytesIO()
        if frame.mode == "RGBA":
            frame.save(out, "PNG", optimize=True)
            media_type = "image/png"
        else:
            frame.save(out, "JPEG", quality=_JPEG_QUALITY)
            media_type = "image/jpeg"
        encoded = out.getvalue()
        if len(encoded) <= vision.max_bytes or side <= 64:
            return Image(media_type, encoded, name, frame.width, frame.height)
        side = side * 3 // 4
        frame.thumbnail((side, side), pil.Resampling.LANCZOS)


def shown(data: bytes, name: str, vision: Vision) -> tuple[Image | None, str]:
    """Image bytes from elsewhere (an MCP result) as sent, and what was done to them or why not.

    Recognised by their first bytes as `view_image` recognises a file, whatever type they claim.
    """
    media_type = sniff(data)
    if media_type is None:
        return None, "not a PNG, JPEG, GIF or WebP image"
    try:
        image, done = fitted(data, media_type, name, vision)
    except ImageError as exc:
        return None, str(exc)
    return image, done


def _has_alpha(image: Any) -> bool:
    return image.mode in ("RGBA", "LA", "PA") or "transparency" in image.info


def blind(model: str | None) -> str:
    """Why an image is not shown to `model`."""
    return f"the model {model or '(unnamed)'} is not known to accept images"

"""A workspace video shown to the model as stills: `view_image` on a video file.

The file is read as `view_image` reads an image (`read_checked`: the read policy, the descriptor
opened before the decision), recognised by its first bytes, and its bytes are handed to the video
worker (`media/worker.py`) in the sandbox with no network and capped time and memory: FFmpeg never
decodes untrusted input in the harness. The worker samples the stills (evenly spaced, or at the
asked times), scales each to the provider's limits and writes it as a JPEG; each still is checked
again here (its bytes are a JPEG within the limits) before it rides on the result like an image.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import math
import os
import shutil
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ioh_tui.core.transcript import Image
from ioh_tui.media import DEFAULT_FRAMES, EXTRA, MAX_FRAMES
from ioh_tui.sandbox.base import EXEC_LIMITS, QUIET_ENV
from ioh_tui.tools.base import ArgumentError, ToolContext, ToolResult, arg_int
from ioh_tui.tools.beneath import TooLarge, read_fd
from ioh_tui.tools.images import SHOWN, ImageError, dimensions, sniff
from ioh_tui.tools.vision import Vision

WALL_S = 60.0
"""The worker's wall-clock cap (at most the run's time left)."""
CPU_S = 60
MEMORY_MB = 1024
"""The worker's memory cap: an 8K frame decoded and scaled needs a fraction of it."""

_KINDS = (
    ("ISO media (MP4, MOV, M4V, 3GP)", lambda d: d[4:8] == b"ftyp"),
    ("QuickTime", lambda d: d[4:8] in (b"moov", b"mdat", b"wide", b"free")),
    ("Matroska or WebM", lambda d: d.startswith(b"\x1a\x45\xdf\xa3")),
    ("AVI", lambda d: d[:4] == b"RIFF" and d[8:12] == b"AVI "),
    ("MPEG program stream", lambda d: d.startswith(b"\x00\x00\x01\xba")),
    ("MPEG transport stream", lambda d: d[:1] == b"\x47" and d[188:189] == b"\x47"),
    ("FLV", lambda d: d.startswith(b"FLV\x01")),
    ("Ogg", lambda d: d.startswith(b"OggS")),
    ("ASF (WMV)", lambda d: d.startswith(b"\x30\x26\xb2\x75\x8e\x66\xcf\x11")),
)
KINDS = "MP4, MOV, WebM, MKV, AVI, MPEG, FLV, Ogg or WMV video"
"""The containers recognised, as the model is told."""


def sniff_video(data: bytes) -> str | None:
    """The container by the first bytes, or None (never by the file's name)."""
    return next((name for name, test in _KINDS if test(data)), None)


def times(args: Mapping[str, Any]) -> tuple[int | None, list[float] | None]:
    """The asked count of evenly spaced stills, or the asked times (sorted, each once).

    Raises:
        ArgumentError: both given, too many, or a time that is not a number of seconds >= 0.
    """
    count, at = arg_int(args, "frames"), args.get("at")
    if count is not None and at is not None:
        raise ArgumentError("give frames (a count) or at (times), not both")
    if count is not None and count > MAX_FRAMES:
        raise ArgumentError(f"frames must be at most {MAX_FRAMES}")
    if at is None:
        return count or DEFAULT_FRAMES, None
    if not isinstance(at, list) or not at or len(at) > MAX_FRAMES:
        raise ArgumentError(f"at must be a list of 1 to {MAX_FRAMES} times in seconds")
    for t in at:
        if isinstance(t, bool) or not isinstance(t, int | float) or not math.isfinite(t) or t < 0:
            raise ArgumentError("each time in at must be a number of seconds, 0 or more")
    return None, sorted({float(t) for t in at})


def available() -> bool:
    """Whether PyAV is installed (looked up, not imported: the harness never decodes)."""
    return importlib.util.find_spec("av") is not None


async def view_video(
    rel: str, data: bytes, kind: str, args: Mapping[str, Any], ctx: ToolContext, vision: Vision
) -> ToolResult:
    """Stills of the video `data` (read from `rel`), shown to the model with the result."""
    verb = "view_image"
    count, at = times(args)
    if not available():
        return ToolResult(
            f"[{verb} {rel} error] {rel} is a video ({kind}); sampling its frames needs PyAV: "
            f"pip install '{EXTRA}'",
            ok=False,
        )
    wall = min(WALL_S, ctx.wall_s())
    if wall <= 0:
        return ToolResult(f"[{verb} {rel} not run] the run's time budget is spent", ok=False)
    folder = Path(tempfile.mkdtemp(prefix="ioh-video-"))
    try:
        (folder / "video").write_bytes(data)
        request = {
            "video": str(folder / "video"),
            "out": str(folder),
            "frames": count,
            "at": at,
            "max_side": vision.max_side,
            "max_bytes": vision.max_bytes,
        }
        (folder / "request.json").write_text(json.dumps(request), encoding="utf-8")
        done = await ctx.sandbox.run(
            [sys.executable, "-I", "-m", "ioh_tui.media.worker", str(folder / "request.json")],
            ctx.workspace.root,
            limits=dataclasses.replace(
                EXEC_LIMITS, wall_s=wall, cpu_s=CPU_S, memory_mb=MEMORY_MB, max_processes=8
            ),
            network=False,
            writable=[folder],
            env=QUIET_ENV,
        )
        if done.cap_hit is not None:
            return ToolResult(
                f"[{verb} {rel} error] decoding the video hit its {done.cap_hit} cap", ok=False
            )
        try:
            answer = json.loads(done.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            last = done.stderr.strip().splitlines()[-1:] or [f"exit {done.exit_code}"]
            return ToolResult(f"[{verb} {rel} error] the video worker failed: {last[0]}", ok=False)
        if not answer.get("ok"):
            if answer.get("missing"):
                why = f"{answer['missing']} is not installed: pip install '{EXTRA}'"
            else:
                why = f"{rel}: {answer.get('error')}"
            return ToolResult(f"[{verb} {rel} error] {why}", ok=False)
        # The worker decoded hostile input: what it says is checked as if hostile too.
        try:
            head = _described(rel, answer)
            said = answer["stills"]
            if not isinstance(said, list) or not 0 < len(said) <= MAX_FRAMES:
                raise ImageError(f"{len(said)} stills")
            stills = [_still(folder, rel, s, vision) for s in said]
        except (ImageError, OSError, KeyError, TypeError, ValueError) as exc:
            return ToolResult(f"[{verb} {rel} error] the video worker's answer: {exc}", ok=False)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    lines = [f"{at:.2f} s: {SHOWN} {image.describe()}" for at, image in stills]
    return ToolResult(
        "\n".join(
            [
                f"{head}: {len(stills)} still frames, in time order; you see these stills, "
                "not the moving video",
                *lines,
            ]
        ),
        images=tuple(image for _, image in stills),
        meta={"path": rel},
    )


def _described(rel: str, answer: Mapping[str, Any]) -> str:
    """`[view_image P] a video (h264, 640x480, 12.00 s, 30 fps)` from the worker's checked word."""
    codec = str(answer["codec"])
    if not codec.isascii() or not codec.replace("_", "").isalnum() or len(codec) > 32:
        raise ImageError("its codec name is malformed")
    width, height = int(answer["width"]), int(answer["height"])
    duration, fps = float(answer["duration"]), float(answer.get("fps") or 0)
    if not (math.isfinite(duration) and math.isfinite(fps)):
        raise ImageError("its duration or rate is not a number")
    rate = f", {fps:g} fps" if fps > 0 else ""
    return f"[view_image {rel}] a video ({codec}, {width}x{height}, {duration:.2f} s{rate})"


def _still(folder: Path, rel: str, said: Mapping[str, Any], vision: Vision) -> tuple[float, Image]:
    """One still the worker wrote, checked: a regular file (never a link), a JPEG within limits."""
    at = float(said["at"])
    name = Path(str(said["file"])).name
    # Not followed, never blocked on: the worker could have left a link or a FIFO under that name.
    fd = os.open(folder / name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        data = read_fd(fd, vision.max_bytes)
    except TooLarge as exc:
        raise ImageError(f"{name}: {exc}") from None
    finally:
        os.close(fd)
    if sniff(data) != "image/jpeg":
        raise ImageError(f"{name} is not a JPEG within {vision.describe()}")
    width, height = dimensions(data, "image/jpeg")
    if not 0 < max(width, height) <= vision.max_side or not math.isfinite(at) or at < 0:
        raise ImageError(f"{name} is {width}x{height} at {at} s")
    return at, Image("image/jpeg", data, f"{rel} at {at:.2f} s", width, height)

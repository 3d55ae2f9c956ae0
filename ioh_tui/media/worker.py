"""The video worker: `python -I -m ioh_tui.media.worker REQUEST.json`, run in the sandbox.

The request names the video (a copy of the bytes the read policy allowed, in the worker's own
folder), the times to take stills at (seconds from the start; `None`: evenly spaced), how many,
and the provider's limits. Each still is scaled to fit them and written as a JPEG beside the
request; one JSON object is printed: `{"ok": true, "codec": ..., "width": ..., "height": ...,
"duration": ..., "fps": ..., "stills": [{"file": ..., "at": ...}, ...]}` or `{"ok": false, "error":
..., "missing": NAME}` (PyAV is not installed).
"""

from __future__ import annotations

import fractions
import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

MAX_PIXELS = 40_000_000
"""The most pixels a frame may have to be decoded (8K is 33 megapixels)."""
_JPEG_Q = 4
"""FFmpeg's MJPEG quantiser, 2 (best) to 31: 4 is about a JPEG quality of 85."""


class VideoError(Exception):
    """The video cannot be sampled; the message is for the model."""


def evenly(duration: float, count: int) -> list[float]:
    """The middles of `count` equal parts of `duration` (one still: the middle)."""
    return [duration * (2 * i + 1) / (2 * count) for i in range(count)]


def sample(req: Mapping[str, Any]) -> dict[str, Any]:
    """Open the video, take its stills, write them; what was found.

    Raises:
        VideoError: no video stream, a frame too large, a time past the end, nothing decodable.
        ImportError: PyAV is not installed.
    """
    import av

    out = Path(req["out"])
    with av.open(str(req["video"]), metadata_errors="ignore") as container:
        if not container.streams.video:
            raise VideoError("it holds no video stream")
        stream = container.streams.video[0]
        ctx = stream.codec_context
        width, height = ctx.width, ctx.height
        if width * height > MAX_PIXELS:
            raise VideoError(f"its frames are {width}x{height}, over {MAX_PIXELS:,} pixels")
        ctx.thread_count = 2
        base = stream.time_base or fractions.Fraction(1, av.time_base)
        start = stream.start_time or 0
        duration = _duration(container, stream, base)
        times = req.get("at") or evenly(duration, int(req["frames"]))
        for t in times:
            if t > duration:
                raise VideoError(f"{t:g} s is past its end ({duration:.2f} s)")
        stills, taken, quarter = [], set(), 0
        for i, t in enumerate(times):
            frame = _frame_at(container, stream, start + int(t / base))
            if frame.pts in taken:
                continue  # a short video: the same frame twice is one still
            taken.add(frame.pts)
            at = float((frame.pts - start) * base) if frame.pts is not None else t
            name = f"still-{i}.jpg"
            # A phone's portrait video is stored on its side, with a display matrix saying so.
            quarter = round(getattr(frame, "rotation", 0) / 90) % 4
            _write_jpeg(
                _upright(frame, quarter), out / name, int(req["max_side"]), int(req["max_bytes"])
            )
            stills.append({"file": name, "at": max(0.0, at)})
        if quarter % 2:
            width, height = height, width
        rate = stream.average_rate
        return {
            "codec": ctx.name,
            "width": width,
            "height": height,
            "duration": duration,
            "fps": float(rate) if rate else None,
            "stills": stills,
        }


def _duration(container: Any, stream: Any, base: fractions.Fraction) -> float:
    """Seconds of video: the stream's word, else the container's, else its last packet's end."""
    if stream.duration:
        return float(stream.duration * base)
    if container.duration:
        return float(container.duration) / 1_000_000
    end = None
    for packet in container.demux(stream):
        if packet.pts is not None:
            end = max(end or 0, packet.pts + (packet.duration or 0))
    if end is None:
        raise VideoError("no frame in it has a time")
    container.seek(0, stream=stream)
    return float((end - (stream.start_time or 0)) * base)


def _frame_at(container: Any, stream: Any, pts: int) -> Any:
    """The frame on screen at `pts`: the last one starting at or before it (else the first).

    Found from the key frame a seek lands on; where that lands after `pts`, or on no key frame
    (a stream without an index, as MPEG-TS is), by decoding from the very start instead.
    """
    after = None
    for target in (pts, 0):
        container.seek(target, stream=stream, backward=True)
        best = None
        for frame in container.decode(stream):
            if frame.pts is not None and frame.pts > pts:
                after = after or frame
                break
            best = frame
        if best is not None:
            return best
    if after is None:
        raise VideoError("no frame could be decoded")
    return after


def _upright(frame: Any, quarter: int) -> Any:
    """`frame` turned `quarter` quarter turns counterclockwise, as its display matrix says."""
    if not quarter:
        return frame
    import av.filter

    graph = av.filter.Graph()
    source = graph.add_buffer(
        width=frame.width,
        height=frame.height,
        format=frame.format.name,
        time_base=frame.time_base or fractions.Fraction(1, 25),
    )
    turns = {1: ["transpose=cclock"], 2: ["hflip", "vflip"], 3: ["transpose=clock"]}[quarter]
    filters = [graph.add(*step.split("=", 1)) for step in turns]
    graph.link_nodes(source, *filters, graph.add("buffersink")).configure()
    graph.push(frame)
    return graph.pull()


def _write_jpeg(frame: Any, path: Path, max_side: int, max_bytes: int) -> None:
    """`frame` as a JPEG within `max_side` px and `max_bytes`, smaller by quarters until it fits."""
    import av

    side = min(max_side, max(frame.width, frame.height))
    while True:
        ratio = side / max(frame.width, frame.height)
        width, height = max(1, round(frame.width * ratio)), max(1, round(frame.height * ratio))
        encoder = av.CodecContext.create("mjpeg", "w")
        encoder.width, encoder.height, encoder.pix_fmt = width, height, "yuvj420p"
        encoder.time_base = fractions.Fraction(1, 25)
        encoder.qmin = encoder.qmax = _JPEG_Q
        scaled = frame.reformat(width=width, height=height, format="yuvj420p", interpolation="AREA")
        data = b"".join(bytes(p) for p in [*encoder.encode(scaled), *encoder.encode(None)])
        if len(data) <= max_bytes or side <= 64:
            path.write_bytes(data)
            return
        side = side * 3 // 4


def run(req: Mapping[str, Any]) -> dict[str, Any]:
    """Do one request; every failure is an answer, never a traceback."""
    try:
        answer = sample(req)
    except ImportError as exc:
        return {"ok": False, "error": str(exc), "missing": exc.name or "?"}
    except VideoError as exc:
        return {"ok": False, "error": str(exc)}
    except Exception as exc:  # FFmpeg's word on a file it cannot demux or decode
        # Its own words without the file name it appends (the worker's copy, not the model's).
        why = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
        return {"ok": False, "error": "FFmpeg cannot read it: " + " ".join(str(why).split())}
    return {"ok": True, **answer}


def main(argv: list[str]) -> int:
    """Read the request file named by `argv[1]`, print the answer."""
    req = json.loads(Path(argv[1]).read_text(encoding="utf-8"))
    sys.stdout.write(json.dumps(run(req)) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

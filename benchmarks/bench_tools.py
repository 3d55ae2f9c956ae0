"""The tool families: each tool's time on a typical file, and each extra's installed size.

Prints figures; asserts nothing. Tools run as a run runs them: through the sandbox the machine
selects (bubblewrap where installed), with a permissive decider, so the time is the tool's own
(the sandbox launch included: a document tool starts one worker per call, a git tool one git).
"""

from __future__ import annotations

import asyncio
import statistics
import subprocess
import tempfile
import time
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

from ioh_tui.core.acts import Act
from ioh_tui.sandbox import select
from ioh_tui.tools import Permit, ToolContext, ToolSet, Workspace
from ioh_tui.tools.families import DOCUMENT_TOOLS, GIT_TOOLS, SCAN_TOOLS, VIEW_IMAGE
from ioh_tui.tools.vision import ANTHROPIC

EXTRAS = {
    "documents": ["python-docx", "openpyxl", "python-pptx", "pypdf", "reportlab", "lxml", "pillow"],
    "scan": ["zxing-cpp", "segno", "python-barcode", "pillow", "pypdf"],
    "images": ["pillow"],
    "video": ["av"],
    "graphics": ["textual-image", "pillow"],
}
"""Each extra's distributions (with the heavy dependencies they bring)."""
ROUNDS = 5

REPORT = {
    "blocks": [
        {"heading": "Report", "level": 1},
        *({"paragraph": f"Paragraph {i}: " + "words " * 30} for i in range(40)),
        {"table": [["item", "cost"], *([f"row {i}", str(i)] for i in range(30))]},
    ]
}
SHEET = {"sheets": [{"name": "Data", "rows": [[f"r{i}", i, i * 1.5] for i in range(500)]}]}
DECK = {"slides": [{"title": f"Slide {i}", "body": ["point a", "point b"]} for i in range(10)]}


async def _allow(act: Act, target: str, **kw: Any) -> Permit:
    return Permit(target, kw.get("content"))


def _context(root: Path) -> ToolContext:
    return ToolContext(Workspace.at(root), _allow, lambda _: True, select("auto"), vision=ANTHROPIC)


async def _time(tools: ToolSet, ctx: ToolContext, name: str, args: Mapping[str, Any]) -> float:
    times = []
    for _ in range(ROUNDS):
        started = time.perf_counter()
        result = await tools.dispatch(name, args, ctx)
        times.append(time.perf_counter() - started)
        if not result.ok:
            raise RuntimeError(f"{name}: {result.output}")
    return statistics.median(times) * 1000


async def _tools(root: Path) -> list[tuple[str, str, float]]:
    ctx = _context(root)
    docs = ToolSet(DOCUMENT_TOOLS)
    rows = []
    for path, content in (
        ("r.docx", REPORT),
        ("r.pdf", REPORT),
        ("s.xlsx", SHEET),
        ("d.pptx", DECK),
    ):
        rows.append(
            (
                "write_document",
                path,
                await _time(docs, ctx, "write_document", {"path": path, "content": content}),
            )
        )
        rows.append(
            ("read_document", path, await _time(docs, ctx, "read_document", {"path": path}))
        )
    edit = {"path": "r.docx", "edits": [{"table": 1, "row": 2, "col": 2, "text": "x"}]}
    rows.append(("edit_document", "r.docx", await _time(docs, ctx, "edit_document", edit)))
    rows.append(
        (
            "pdf_watermark",
            "r.pdf",
            await _time(
                docs, ctx, "pdf_watermark", {"path": "r.pdf", "text": "DRAFT", "output": "w.pdf"}
            ),
        )
    )
    rows.append(
        (
            "pdf_merge",
            "2 files",
            await _time(docs, ctx, "pdf_merge", {"paths": ["r.pdf", "w.pdf"], "output": "m.pdf"}),
        )
    )
    rows.append(
        (
            "pdf_split",
            "r.pdf",
            await _time(docs, ctx, "pdf_split", {"path": "m.pdf", "pages": "1", "output": "p.pdf"}),
        )
    )
    scans = ToolSet(SCAN_TOOLS)
    _line(root / "line.png")
    rows.append(("ocr", "1 line", await _time(scans, ctx, "ocr", {"path": "line.png"})))
    qr = {"path": "qr.png", "data": "https://example.invalid/42"}
    rows.append(("barcode_write", "qr", await _time(scans, ctx, "barcode_write", qr)))
    rows.append(("barcode_read", "qr", await _time(scans, ctx, "barcode_read", {"path": "qr.png"})))
    images = ToolSet((VIEW_IMAGE,))
    _photo(root / "small.png", (1024, 768))
    _photo(root / "large.jpg", (4032, 3024))
    for path, what in (("small.png", "1024x768"), ("large.jpg", "4032x3024")):
        rows.append(("view_image", what, await _time(images, ctx, "view_image", {"path": path})))
    _video(root / "clip.mp4")
    look = {"path": "clip.mp4"}  # 4 stills, through the video worker in the sandbox
    rows.append(
        ("view_image", "720p video, 4 stills", await _time(images, ctx, "view_image", look))
    )
    git = ToolSet(GIT_TOOLS)
    _repository(root)
    rows.append(("git_status", "200 files", await _time(git, ctx, "git_status", {})))
    rows.append(("git_add", "1 file", await _time(git, ctx, "git_add", {"paths": ["f1.py"]})))
    rows.append(("git_diff", "staged", await _time(git, ctx, "git_diff", {"staged": True})))
    return rows


def _line(path: Path) -> None:
    from PIL import Image, ImageDraw, ImageFont

    font = ImageFont.load_default(size=28)
    text = "Invoice INV-2026-0042 total due: $1,249.50 by 15 March"
    image = Image.new("L", (int(font.getlength(text)) + 40, 56), 255)
    ImageDraw.Draw(image).text((20, 14), text, font=font, fill=0)
    image.save(path)


def _photo(path: Path, size: tuple[int, int]) -> None:
    # Noise over a gradient: a photograph's entropy, so compression takes its real time.
    from PIL import Image

    noise = Image.effect_noise(size, 40).convert("RGB")
    Image.blend(Image.linear_gradient("L").resize(size).convert("RGB"), noise, 0.3).save(path)


def _video(path: Path) -> None:
    # Ten seconds of 1280x720 H.264 at 10 fps, a new noisy picture each second (a GOP each).
    import os

    import av

    with av.open(str(path), "w") as container:
        stream = container.add_stream("libx264", rate=10)
        stream.width, stream.height, stream.pix_fmt = 1280, 720, "yuv420p"
        stream.options = {"preset": "ultrafast", "g": "10"}
        for second in range(10):
            pixels = os.urandom(1280 * 720 * 4)
            for i in range(10):
                frame = av.VideoFrame.from_bytes(pixels, 1280, 720, "rgba")
                frame.pts = second * 10 + i
                container.mux(stream.encode(frame))
        container.mux(stream.encode(None))


def _repository(root: Path) -> None:
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    for i in range(200):
        (root / f"f{i}.py").write_text(f"x = {i}\n")


def _size(names: list[str]) -> float:
    total = 0
    for name in names:
        try:
            files = metadata.distribution(name).files or []
        except metadata.PackageNotFoundError:
            continue
        for file in files:
            located = Path(str(file.locate()))
            if located.is_file():
                total += located.stat().st_size
    return total / 2**20


def main() -> None:
    """Print a table of tool times and extra sizes."""
    with tempfile.TemporaryDirectory() as tmp:
        rows = asyncio.run(_tools(Path(tmp)))
    print(f"sandbox: {select('auto').backend}; median of {ROUNDS} calls")
    for name, what, ms in rows:
        print(f"{name:16} {what:10} {ms:8.1f} ms")
    for extra, names in EXTRAS.items():
        print(f"extra {extra}: {_size(names):.1f} MB installed ({', '.join(names)})")
    print("ocr also needs Debian's tesseract-ocr: 12 MB of packages (dpkg, measured once)")


if __name__ == "__main__":
    main()

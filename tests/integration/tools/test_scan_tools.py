"""OCR and barcodes on images made in the test, Tesseract and zxing-cpp running in bubblewrap."""

from __future__ import annotations

import difflib
import shutil
from pathlib import Path

import pytest
from PIL import Image, ImageDraw, ImageFont

from ioh_tui.policy import Policy
from ioh_tui.sandbox.bwrap import BwrapSandbox
from ioh_tui.tools import ToolContext, ToolSet
from ioh_tui.tools.base import ToolResult
from ioh_tui.tools.families import SCAN_TOOLS, wants_scans
from tests.unit.tools.context import context

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bwrap")
needs_tesseract = pytest.mark.skipif(
    shutil.which("tesseract") is None, reason="needs Debian's tesseract-ocr (.ci/run installs it)"
)

TOOLS = ToolSet(SCAN_TOOLS)
LINE = "Invoice INV-2026-0042 total due: $1,249.50 by 15 March"


def ctx_on(root: Path, policy: Policy | None = None) -> ToolContext:
    ctx = context(root, policy or Policy.permissive())
    ctx.sandbox = BwrapSandbox()
    return ctx


async def call(ctx: ToolContext, tool: str, /, **args: object) -> ToolResult:
    return await TOOLS.dispatch(tool, args, ctx)


def rendered(text: str, size: int = 28) -> Image.Image:
    # Pillow's own font: no system font is needed.
    font = ImageFont.load_default(size=size)
    image = Image.new("L", (int(font.getlength(text)) + 40, size * 2), 255)
    ImageDraw.Draw(image).text((20, size // 2), text, font=font, fill=0)
    return image


def accuracy(truth: str, got: str) -> float:
    return difflib.SequenceMatcher(None, truth, got.strip()).ratio()


@needs_tesseract
async def test_ocr_reads_a_rendered_line(tmp_path: Path) -> None:
    rendered(LINE).save(tmp_path / "scan.png")
    result = await call(ctx_on(tmp_path), "ocr", path="scan.png")
    assert result.ok, result.output
    text = result.output.split("\n", 1)[1]
    assert accuracy(LINE, text) >= 0.95, text


@needs_tesseract
async def test_ocr_reads_a_scanned_pdf_page(tmp_path: Path) -> None:
    first, second = rendered("nothing to see on page one"), rendered(LINE)
    first.convert("RGB").save(
        tmp_path / "scan.pdf", save_all=True, append_images=[second.convert("RGB")]
    )
    result = await call(ctx_on(tmp_path), "ocr", path="scan.pdf", page=2)
    assert result.ok, result.output
    assert accuracy(LINE, result.output.split("\n", 1)[1]) >= 0.95, result.output
    beyond = await call(ctx_on(tmp_path), "ocr", path="scan.pdf", page=3)
    assert not beyond.ok and "has 2 pages" in beyond.output


@pytest.mark.parametrize(
    ("kind", "data", "held", "fmt"),
    [
        ("qr", "https://example.invalid/ticket/42", "https://example.invalid/ticket/42", "QRCode"),
        ("code128", "IOH-42", "IOH-42", "Code128"),
        ("ean13", "590123412345", "5901234123457", "EAN13"),
    ],
)
async def test_a_written_code_reads_back(
    tmp_path: Path, kind: str, data: str, held: str, fmt: str
) -> None:
    ctx = ctx_on(tmp_path)
    written = await call(ctx, "barcode_write", path="code.png", data=data, kind=kind)
    assert written.ok and written.changed, written.output
    read = await call(ctx, "barcode_read", path="code.png")
    assert read.ok, read.output
    assert f"{fmt}: {held}" in read.output


async def test_an_svg_code_and_bad_data(tmp_path: Path) -> None:
    ctx = ctx_on(tmp_path)
    svg = await call(ctx, "barcode_write", path="code.svg", data="hello", kind="qr")
    assert svg.ok and (tmp_path / "code.svg").read_text().lstrip().startswith("<?xml")
    bad = await call(ctx, "barcode_write", path="ean.png", data="12ab", kind="ean13")
    assert not bad.ok and "cannot be a ean13 code" in bad.output
    assert not (tmp_path / "ean.png").exists()
    none = await call(ctx, "barcode_read", path="code.svg")
    assert not none.ok  # an SVG is not an image zxing-cpp reads


async def test_a_denied_write_writes_nothing(tmp_path: Path) -> None:
    ctx = ctx_on(tmp_path, Policy.default().layer("t").deny_write("*.png"))
    refused = await call(ctx, "barcode_write", path="code.png", data="x")
    assert refused.refused and not (tmp_path / "code.png").exists()


def test_scan_tools_are_offered_when_the_task_names_them() -> None:
    assert wants_scans("read the QR code on the label")
    assert wants_scans("OCR the scanned invoice")
    assert not wants_scans("fix the failing test in scanner_utils.py")

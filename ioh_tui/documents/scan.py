"""Text and codes from images: OCR with Tesseract; barcodes with zxing-cpp, segno, python-barcode.

Barcodes are read with zxing-cpp and written with segno (QR) and python-barcode (Code 128,
EAN-13). Tesseract was chosen over RapidOCR by measuring both on the same rendered lines (14, 20
and 32 px, clean and rotated, blurred and speckled): Tesseract 5.3 read 94-100 % of characters,
RapidOCR (ONNX Runtime) 76-100 % with one line missed whole, at a sixth of the time per line, and
from 12 MB of Debian packages against 220 MB of wheels (docs/tools.md has the figures). It is
Debian's `tesseract-ocr`, run as a command, with its bundled English model: nothing is downloaded.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from ioh_tui.documents.reading import DocumentError, page_numbers

IMAGES = (".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp", ".tif", ".tiff")
TESSERACT_HINT = "install Debian's tesseract-ocr (apt-get install tesseract-ocr)"
KINDS = ("qr", "code128", "ean13")
OCR_WALL_S = 90


class Missing(Exception):
    """A program or library the operation needs is not installed; `hint` says how to get it."""

    def __init__(self, name: str, hint: str) -> None:
        super().__init__(f"{name} is not installed: {hint}")
        self.name = name
        self.hint = hint


def ocr(path: Path, page: int | None) -> str:
    """The text Tesseract reads in an image, or in the images of a scanned PDF page."""
    exe = shutil.which("tesseract")
    if exe is None:
        raise Missing("tesseract", TESSERACT_HINT)
    suffix = path.suffix.lower()
    if suffix in IMAGES:
        return _tesseract(exe, path)
    if suffix != ".pdf":
        raise DocumentError(f"{path.name}: ocr reads images ({', '.join(IMAGES)}) and PDF pages")
    texts = []
    with tempfile.TemporaryDirectory() as tmp:
        for n, image in enumerate(_page_images(path, page)):
            out = Path(tmp) / f"{n}.png"
            image.save(out)
            texts.append(_tesseract(exe, out))
    return "\n".join(texts)


def _page_images(path: Path, page: int | None) -> list[Any]:
    import pypdf

    reader = pypdf.PdfReader(str(path))
    (number,) = page_numbers(str(page or 1), len(reader.pages))
    images = [found.image for found in reader.pages[number - 1].images]
    if not images:
        raise DocumentError(
            f"page {number} of {path.name} holds no image to read; its text (if any) reads "
            "with read_document"
        )
    return images


def _tesseract(exe: str, image: Path) -> str:
    done = subprocess.run(
        [exe, str(image), "stdout"], capture_output=True, text=True, timeout=OCR_WALL_S, check=False
    )
    if done.returncode != 0:
        raise DocumentError(f"tesseract could not read {image.name}: {done.stderr.strip()[:300]}")
    return done.stdout.strip()


def read_codes(path: Path) -> list[dict[str, str]]:
    """Every barcode and QR code zxing-cpp finds in an image: format, text and where."""
    import zxingcpp
    from PIL import Image

    if path.suffix.lower() not in IMAGES:
        raise DocumentError(f"{path.name}: barcode_read reads images ({', '.join(IMAGES)})")
    with Image.open(path) as image:
        found = zxingcpp.read_barcodes(image.convert("RGB"))
    return [
        {"format": code.format.name, "text": code.text, "position": str(code.position)}
        for code in found
    ]


def write_code(path: Path, data: str, kind: str) -> str:
    """Write `data` as a `kind` code to a .png or .svg; the text the code holds."""
    suffix = path.suffix.lower()
    if suffix not in (".png", ".svg"):
        raise DocumentError("barcode_write writes a .png or an .svg")
    if kind == "qr":
        import segno

        # micro=False: a short text would otherwise become a Micro QR, which many readers skip.
        segno.make(data, micro=False, error="m").save(str(path), scale=8, border=4)
        return data
    if kind not in KINDS:
        raise DocumentError(f"kind must be one of {', '.join(KINDS)}")
    import barcode
    from barcode.errors import BarcodeError
    from barcode.writer import ImageWriter, SVGWriter

    writer = ImageWriter() if suffix == ".png" else SVGWriter()
    try:
        code = barcode.get(kind, data, writer=writer)
    except (BarcodeError, ValueError) as exc:
        raise DocumentError(f"{data!r} cannot be a {kind} code: {exc}") from None
    with path.open("wb") as sink:
        code.write(sink)
    return str(code.get_fullcode())

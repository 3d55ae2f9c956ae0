"""Measure the two OCR engines the issue names on the same rendered lines (docs/tools.md).

Needs, in a throwaway virtual environment (not the project's: RapidOCR brings 220 MB):
    pip install rapidocr-onnxruntime pytesseract pillow numpy
and Debian's tesseract-ocr. Prints mean and worst character accuracy and time per line for each
engine, size and noise; the figures in docs/tools.md came from it.
"""

from __future__ import annotations

import difflib
import random
import time
from collections.abc import Callable

import numpy  # type: ignore[import-not-found, unused-ignore]
import pytesseract  # type: ignore[import-not-found, unused-ignore]
from PIL import Image, ImageDraw, ImageFilter, ImageFont
from rapidocr_onnxruntime import RapidOCR  # type: ignore[import-not-found, unused-ignore]

LINES = (
    "The quick brown fox jumps over the lazy dog 1234567890",
    "Invoice INV-2026-0042 total due: $1,249.50 by 15 March",
    "Run the tests with pytest -q before every commit.",
    "Sphinx of black quartz, judge my vow; pack my box!",
    "ioh-tui verifies results by running the project's tests",
)


def render(text: str, size: int, noisy: bool) -> Image.Image:
    """A line of text in Pillow's own font; noisy: rotated, blurred and speckled."""
    font = ImageFont.load_default(size=size)
    image = Image.new("L", (int(font.getlength(text)) + 40, size * 2), 255)
    ImageDraw.Draw(image).text((20, size // 2), text, font=font, fill=0)
    if noisy:
        image = image.rotate(1.5, expand=True, fillcolor=255).filter(ImageFilter.GaussianBlur(0.6))
        pixels, draw = image.load(), random.Random(1)
        assert pixels is not None
        for _ in range(image.width * image.height // 50):
            pixels[draw.randrange(image.width), draw.randrange(image.height)] = draw.randrange(256)
    return image


def main() -> None:
    """Print one row per engine, size and noise."""
    rapid = RapidOCR()

    def with_rapid(image: Image.Image) -> str:
        found = rapid(numpy.array(image.convert("RGB")))[0] or []
        return " ".join(str(row[1]) for row in found)

    engines: dict[str, Callable[[Image.Image], str]] = {
        "tesseract": lambda image: str(pytesseract.image_to_string(image)),
        "rapidocr": with_rapid,
    }
    for name, read in engines.items():
        for size in (14, 20, 32):
            for noisy in (False, True):
                started, scores = time.perf_counter(), []
                for line in LINES:
                    got = read(render(line, size, noisy)).strip()
                    scores.append(difflib.SequenceMatcher(None, line, got).ratio())
                per_line = (time.perf_counter() - started) / len(LINES) * 1000
                print(
                    f"{name:10} {size} px noisy={noisy!s:5} mean {sum(scores) / len(scores):.3f}"
                    f" worst {min(scores):.3f} {per_line:.0f} ms a line"
                )


if __name__ == "__main__":
    main()

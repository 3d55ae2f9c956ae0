"""PDF operations with pypdf: watermark, list and fill form fields, merge, split."""

from __future__ import annotations

import io
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ioh_tui.documents.reading import DocumentError, page_numbers


def watermark(path: Path, text: str, out: Path, pages: str | None) -> int:
    """Stamp `text` across the chosen pages (all when None); the number of pages stamped.

    The mark is real page content (drawn by reportlab and merged under pypdf), so it is printed
    and extracted with the page's text, unlike an annotation a viewer may hide.
    """
    import pypdf

    reader = pypdf.PdfReader(str(path))
    writer = pypdf.PdfWriter(clone_from=reader)
    chosen = page_numbers(pages, len(reader.pages))
    for number in chosen:
        page = writer.pages[number - 1]
        width, height = float(page.mediabox.width), float(page.mediabox.height)
        page.merge_page(_stamp(text, width, height))
    with out.open("wb") as sink:
        writer.write(sink)
    return len(chosen)


def _stamp(text: str, width: float, height: float) -> Any:
    import pypdf
    from reportlab.lib.colors import Color
    from reportlab.pdfgen import canvas

    buffer = io.BytesIO()
    sheet = canvas.Canvas(buffer, pagesize=(width, height))
    sheet.setFillColor(Color(0.5, 0.5, 0.5, alpha=0.3))
    size = max(12.0, min(72.0, 1.4 * width / max(len(text), 1)))
    sheet.setFont("Helvetica-Bold", size)
    sheet.translate(width / 2, height / 2)
    sheet.rotate(45)
    sheet.drawCentredString(0, 0, text)
    sheet.save()
    return pypdf.PdfReader(io.BytesIO(buffer.getvalue())).pages[0]


def form_fields(path: Path) -> dict[str, str]:
    """The AcroForm fields of a PDF with their current values."""
    import pypdf

    fields = pypdf.PdfReader(str(path)).get_fields() or {}
    return {name: str(field.get("/V", "") or "") for name, field in fields.items()}


def fill_form(path: Path, values: Mapping[str, str], out: Path) -> dict[str, str]:
    """Fill the named fields and save at `out`; the fields' values read back from `out`."""
    import pypdf

    reader = pypdf.PdfReader(str(path))
    known = reader.get_fields() or {}
    if not known:
        raise DocumentError(f"{path.name} has no form fields")
    unknown = sorted(set(values) - set(known))
    if unknown:
        raise DocumentError(
            f"no field {', '.join(unknown)}; the fields are {', '.join(sorted(known))}"
        )
    writer = pypdf.PdfWriter(clone_from=reader)
    for page in writer.pages:
        writer.update_page_form_field_values(page, dict(values), auto_regenerate=False)
    # Viewers redraw the fields from their values rather than from stale appearance streams.
    writer.set_need_appearances_writer(True)
    with out.open("wb") as sink:
        writer.write(sink)
    return form_fields(out)


def merge(paths: list[Path], out: Path) -> int:
    """Concatenate the PDFs at `paths` into `out`; its page count."""
    import pypdf

    writer = pypdf.PdfWriter()
    for path in paths:
        writer.append(str(path))
    with out.open("wb") as sink:
        writer.write(sink)
    return len(writer.pages)


def split(path: Path, pages: str, out: Path) -> int:
    """Write the chosen pages of `path` to `out`; the number written."""
    import pypdf

    reader = pypdf.PdfReader(str(path))
    chosen = page_numbers(pages, len(reader.pages))
    writer = pypdf.PdfWriter()
    for number in chosen:
        writer.add_page(reader.pages[number - 1])
    with out.open("wb") as sink:
        writer.write(sink)
    return len(chosen)

"""Documents made in the test, with the same libraries the criterion reads them with."""

from __future__ import annotations

from pathlib import Path

import docx
import openpyxl
import pptx
from pptx.util import Inches
from pypdf import PdfWriter
from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject


def make_docx(path: Path, body: str, *, cell: str = "", header: str = "") -> Path:
    """A .docx with a paragraph, a one-cell table and a header."""
    document = docx.Document()
    document.add_paragraph(body)
    if cell:
        document.add_table(rows=1, cols=1).cell(0, 0).text = cell
    if header:
        document.sections[0].header.paragraphs[0].text = header
    document.save(str(path))
    return path


def make_xlsx(path: Path, rows: list[list[object]], *, title: str = "Sheet") -> Path:
    """A .xlsx with one sheet of rows."""
    book = openpyxl.Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.title = title
    for row in rows:
        sheet.append(row)
    book.save(path)
    return path


def make_pptx(path: Path, title: str, *, notes: str = "", table: str = "") -> Path:
    """A .pptx with a titled slide, optional speaker notes and a one-cell table."""
    deck = pptx.Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[5])  # title only
    assert slide.shapes.title is not None
    slide.shapes.title.text = title
    if notes:
        frame = slide.notes_slide.notes_text_frame
        assert frame is not None
        frame.text = notes
    if table:
        shape = slide.shapes.add_table(1, 1, Inches(1), Inches(2), Inches(4), Inches(1))
        shape.table.cell(0, 0).text = table
    deck.save(str(path))
    return path


def make_pdf(path: Path, lines: list[str]) -> Path:
    """A one-page PDF whose content stream shows `lines` in Helvetica."""
    writer = PdfWriter()
    page = writer.add_blank_page(width=612, height=792)
    font = DictionaryObject(
        {
            NameObject("/Type"): NameObject("/Font"),
            NameObject("/Subtype"): NameObject("/Type1"),
            NameObject("/BaseFont"): NameObject("/Helvetica"),
        }
    )
    page[NameObject("/Resources")] = DictionaryObject(
        {NameObject("/Font"): DictionaryObject({NameObject("/F1"): font})}
    )
    ops = "BT /F1 12 Tf 72 720 Td 14 TL " + " ".join(f"({line}) '" for line in lines) + " ET"
    stream = DecodedStreamObject()
    stream.set_data(ops.encode("latin-1"))
    page[NameObject("/Contents")] = stream
    with path.open("wb") as handle:
        writer.write(handle)
    return path

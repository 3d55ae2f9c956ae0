"""A document as text with its structure: headings, tables as rows, sheets by name, slides, pages.

The same rendering shows a document to the model (`read_document`) and shows a change to the
person asked (the text before and after an edit), so both see the same thing.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

_HEADING = re.compile(r"Heading (\d)")
_CELL = re.compile(r"([A-Z]{1,3})(\d{1,7})")


class DocumentError(Exception):
    """Arguments the document cannot honour (no such sheet, page or slide); told to the model."""


def render(
    path: Path, *, pages: str | None = None, sheet: str | None = None, cells: str | None = None
) -> str:
    """The document at `path` as structured text.

    Args:
        path: a .docx, .xlsx, .pptx or .pdf file.
        pages: PDF pages or pptx slides to show (`1-3,5`; 1-based); all when None.
        sheet: the xlsx sheet to show; all when None.
        cells: an xlsx range (`A1:C10`) within `sheet` (or the first sheet).
    """
    suffix = path.suffix.lower()
    if suffix == ".docx":
        return "\n".join(_docx(path))
    if suffix == ".xlsx":
        return "\n".join(_xlsx(path, sheet, cells))
    if suffix == ".pptx":
        return "\n".join(_pptx(path, pages))
    if suffix == ".pdf":
        return "\n".join(_pdf(path, pages))
    raise DocumentError(f"{path.name} is not a .docx, .xlsx, .pptx or .pdf document")


def page_numbers(spec: str | None, count: int, what: str = "page") -> list[int]:
    """1-based numbers from a spec like `1-3,5` (None: all), each checked against `count`."""
    if spec is None or not spec.strip():
        return list(range(1, count + 1))
    out: list[int] = []
    for part in spec.split(","):
        bounds = part.strip().split("-")
        try:
            first, last = int(bounds[0]), int(bounds[-1])
        except ValueError:
            raise DocumentError(f"{what}s must look like 1-3,5 (got {spec!r})") from None
        if len(bounds) > 2 or first < 1 or last < first or last > count:
            raise DocumentError(f"{what}s {part.strip()!r}: the document has {count} {what}s")
        out.extend(n for n in range(first, last + 1) if n not in out)
    return out


def table_rows(rows: list[list[str]]) -> Iterator[str]:
    """A table as `| a | b |` lines."""
    for row in rows:
        yield "| " + " | ".join(cell.replace("\n", " ") for cell in row) + " |"


def _docx(path: Path) -> Iterator[str]:
    import docx
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    document = docx.Document(str(path))
    tables = 0
    for block in document.iter_inner_content():
        if isinstance(block, Paragraph):
            style = block.style.name if block.style is not None else ""
            heading = _HEADING.fullmatch(style or "")
            if style == "Title":
                yield f"# {block.text}"
            elif heading:
                yield f"{'#' * (int(heading.group(1)) + 1)} {block.text}"
            elif style and style.startswith("List"):
                yield f"- {block.text}"
            else:
                yield block.text
        elif isinstance(block, Table):
            tables += 1
            yield f"[table {tables}]"
            yield from table_rows([[cell.text for cell in row.cells] for row in block.rows])


def _xlsx(path: Path, sheet: str | None, cells: str | None) -> Iterator[str]:
    import openpyxl

    # Formulas are shown as written (`=SUM(A1:A3)`): a file written by a program has no cached
    # values until a spreadsheet application computes them.
    book = openpyxl.load_workbook(path, read_only=True)
    try:
        names = book.sheetnames
        if sheet is not None and sheet not in names:
            raise DocumentError(f"no sheet {sheet!r}; the sheets are {', '.join(names)}")
        chosen = [sheet] if sheet is not None else names
        yield f"sheets: {', '.join(names)}"
        for name in chosen:
            ws = book[name]
            yield f"## sheet {name}"
            if cells is not None:
                rows: Any = ws[_checked_range(cells)]
                rows = (
                    rows
                    if isinstance(rows, tuple) and rows and isinstance(rows[0], tuple)
                    else (rows,)
                )
                for row in rows:
                    yield from _row_lines(row)
                cells = None  # a range names cells of the first sheet shown only
                continue
            for row in ws.iter_rows():
                yield from _row_lines(row)
    finally:
        book.close()


def _row_lines(row: Any) -> Iterator[str]:
    values = [(c.coordinate, c.value) for c in row if getattr(c, "value", None) is not None]
    if values:
        yield "  ".join(f"{ref}={value}" for ref, value in values)


def _checked_range(cells: str) -> str:
    parts = cells.upper().split(":")
    if len(parts) > 2 or not all(_CELL.fullmatch(p) for p in parts):
        raise DocumentError(f"range must look like A1 or A1:C10 (got {cells!r})")
    return cells.upper()


def _shape_lines(shape: Any) -> Iterator[str]:
    from pptx.shapes.graphfrm import GraphicFrame
    from pptx.shapes.group import GroupShape

    if isinstance(shape, GroupShape):
        for inner in shape.shapes:
            yield from _shape_lines(inner)
    elif isinstance(shape, GraphicFrame) and shape.has_table:
        yield "[table]"
        yield from table_rows([[c.text for c in row.cells] for row in shape.table.rows])
    elif shape.has_text_frame and shape.text_frame.text.strip():
        for paragraph in shape.text_frame.paragraphs:
            if paragraph.text.strip():
                yield f"- {paragraph.text}" if paragraph.level else paragraph.text


def _pptx(path: Path, slides: str | None) -> Iterator[str]:
    import pptx

    deck = pptx.Presentation(str(path))
    every = list(deck.slides)
    for number in page_numbers(slides, len(every), "slide"):
        slide = every[number - 1]
        title = slide.shapes.title
        yield f"## slide {number}: {title.text if title is not None else ''}".rstrip(": ")
        for shape in slide.shapes:
            if title is None or shape.shape_id != title.shape_id:
                yield from _shape_lines(shape)
        if slide.has_notes_slide and slide.notes_slide.notes_text_frame is not None:
            notes = slide.notes_slide.notes_text_frame.text.strip()
            if notes:
                yield f"notes: {notes}"


def _pdf(path: Path, pages: str | None) -> Iterator[str]:
    import pypdf

    reader = pypdf.PdfReader(str(path))
    numbers = page_numbers(pages, len(reader.pages))
    yield f"pages: {len(reader.pages)}"
    fields = reader.get_fields() or {}
    if fields:
        yield "form fields: " + ", ".join(
            f"{name}={field.get('/V', '')}" for name, field in sorted(fields.items())
        )
    for number in numbers:
        yield f"## page {number}"
        yield reader.pages[number - 1].extract_text()

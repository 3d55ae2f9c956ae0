"""Documents written from structured content (the `write_document` tool's `content`).

- .docx and .pdf: `{"blocks": [...]}` (or `{"paragraphs": ["...", ...]}`), each block one of
  `{"heading": "text", "level": 1}`, `{"paragraph": "text"}`, `{"bullets": ["a", "b"]}`,
  `{"table": [["h1", "h2"], ["a", "b"]]}`, `{"page_break": true}`.
- .xlsx: `{"sheets": [{"name": "Totals", "rows": [["item", "cost"], ["tea", 3.5]]}]}`; a string
  starting with `=` is a formula.
- .pptx: `{"slides": [{"title": "...", "body": ["point", ...], "notes": "...",
  "table": [[...]]}]}`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ioh_tui.documents.reading import DocumentError

Block = Mapping[str, Any]


def write(path: Path, content: Mapping[str, Any]) -> None:
    """Create (or replace) the document at `path` from `content`."""
    suffix = path.suffix.lower()
    if suffix == ".docx":
        _docx(path, blocks(content))
    elif suffix == ".pdf":
        _pdf(path, blocks(content))
    elif suffix == ".xlsx":
        _xlsx(path, content)
    elif suffix == ".pptx":
        _pptx(path, content)
    else:
        raise DocumentError(f"{path.name}: write_document writes .docx, .xlsx, .pptx or .pdf")


def blocks(content: Mapping[str, Any]) -> list[Block]:
    """The blocks of a .docx or .pdf content, checked."""
    if "paragraphs" in content and "blocks" not in content:
        paragraphs = content["paragraphs"]
        if not isinstance(paragraphs, list) or not all(isinstance(p, str) for p in paragraphs):
            raise DocumentError("content.paragraphs must be a list of strings")
        return [{"paragraph": p} for p in paragraphs]
    found = content.get("blocks")
    if not isinstance(found, list) or not all(isinstance(b, dict) for b in found):
        raise DocumentError(
            "content must hold blocks: a list of {heading, level} / {paragraph} / {bullets} / "
            "{table} / {page_break} objects (or paragraphs: a list of strings)"
        )
    for i, block in enumerate(found):
        kinds = set(block) & {"heading", "paragraph", "bullets", "table", "page_break"}
        if len(kinds) != 1:
            raise DocumentError(
                f"blocks[{i}] must have exactly one of heading, paragraph, bullets, table, "
                "page_break"
            )
        if "table" in block:
            table(block["table"], f"blocks[{i}].table")
        if "bullets" in block and not (
            isinstance(block["bullets"], list) and all(isinstance(b, str) for b in block["bullets"])
        ):
            raise DocumentError(f"blocks[{i}].bullets must be a list of strings")
        for key in ("heading", "paragraph"):
            if key in block and not isinstance(block[key], str):
                raise DocumentError(f"blocks[{i}].{key} must be a string")
    return found


def table(rows: Any, where: str) -> list[list[str]]:
    """A table's rows as strings, checked (every row a list)."""
    if not isinstance(rows, list) or not rows or not all(isinstance(r, list) and r for r in rows):
        raise DocumentError(f"{where} must be a non-empty list of non-empty rows (lists)")
    return [["" if cell is None else str(cell) for cell in row] for row in rows]


def _level(block: Block) -> int:
    level = block.get("level", 1)
    if not isinstance(level, int) or not 1 <= level <= 6:
        raise DocumentError("a heading's level must be 1 to 6")
    return level


def _docx(path: Path, found: list[Block]) -> None:
    import docx

    document = docx.Document()
    for block in found:
        add_docx_block(document, block)
    document.save(str(path))


def add_docx_block(document: Any, block: Block) -> None:
    """Append one block to a python-docx document."""
    from docx.enum.text import WD_BREAK

    if "heading" in block:
        document.add_heading(block["heading"], level=_level(block))
    elif "paragraph" in block:
        document.add_paragraph(block["paragraph"])
    elif "bullets" in block:
        for item in block["bullets"]:
            document.add_paragraph(item, style="List Bullet")
    elif "table" in block:
        rows = table(block["table"], "table")
        width = max(len(r) for r in rows)
        grid = document.add_table(rows=len(rows), cols=width)
        grid.style = "Table Grid"
        for r, row in enumerate(rows):
            for c, text in enumerate(row):
                grid.cell(r, c).text = text
    elif block.get("page_break"):
        document.add_paragraph().add_run().add_break(WD_BREAK.PAGE)


def _pdf(path: Path, found: list[Block]) -> None:
    from xml.sax.saxutils import escape

    from reportlab.lib import colors
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import getSampleStyleSheet
    from reportlab.platypus import (
        ListFlowable,
        ListItem,
        PageBreak,
        Paragraph,
        SimpleDocTemplate,
        Table,
        TableStyle,
    )

    styles = getSampleStyleSheet()
    story: list[Any] = []
    for block in found:
        if "heading" in block:
            story.append(
                Paragraph(escape(block["heading"]), styles[f"Heading{min(_level(block), 6)}"])
            )
        elif "paragraph" in block:
            story.append(Paragraph(escape(block["paragraph"]), styles["BodyText"]))
        elif "bullets" in block:
            items: list[Any] = [
                ListItem(Paragraph(escape(b), styles["BodyText"])) for b in block["bullets"]
            ]
            story.append(ListFlowable(items, bulletType="bullet"))
        elif "table" in block:
            grid = Table(table(block["table"], "table"))
            grid.setStyle(TableStyle([("GRID", (0, 0), (-1, -1), 0.5, colors.grey)]))
            story.append(grid)
        elif block.get("page_break"):
            story.append(PageBreak())
    SimpleDocTemplate(str(path), pagesize=A4).build(story)


def _xlsx(path: Path, content: Mapping[str, Any]) -> None:
    import openpyxl

    sheets = content.get("sheets")
    if not isinstance(sheets, list) or not sheets or not all(isinstance(s, dict) for s in sheets):
        raise DocumentError("content.sheets must be a non-empty list of {name, rows} objects")
    book = openpyxl.Workbook()
    default = book.active
    for i, spec in enumerate(sheets):
        name, rows = spec.get("name"), spec.get("rows", [])
        if not isinstance(name, str) or not name or not isinstance(rows, list):
            raise DocumentError(f"sheets[{i}] needs a name (string) and rows (a list of lists)")
        ws = book.create_sheet(name)
        for row in rows:
            if not isinstance(row, list):
                raise DocumentError(f"sheets[{i}].rows must be lists of cell values")
            ws.append([cell_value(v) for v in row])
    if default is not None:
        book.remove(default)
    book.save(path)


def cell_value(value: Any) -> Any:
    """A cell's value as openpyxl stores it (numbers, booleans, text, empty)."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    raise DocumentError(
        f"a cell holds a number, a boolean, text or null (got {type(value).__name__})"
    )


def _pptx(path: Path, content: Mapping[str, Any]) -> None:
    import pptx

    slides = content.get("slides")
    if not isinstance(slides, list) or not slides or not all(isinstance(s, dict) for s in slides):
        raise DocumentError("content.slides must be a non-empty list of {title, body} objects")
    deck = pptx.Presentation()
    for spec in slides:
        add_slide(deck, spec)
    deck.save(str(path))


def add_slide(deck: Any, spec: Mapping[str, Any]) -> None:
    """Append a title-and-content slide (with an optional table and notes) to a deck."""
    from pptx.util import Inches

    title, body = spec.get("title", ""), spec.get("body", [])
    if isinstance(body, str):
        body = [body]
    if (
        not isinstance(title, str)
        or not isinstance(body, list)
        or not all(isinstance(b, str) for b in body)
    ):
        raise DocumentError("a slide's title is a string and its body a list of strings")
    slide = deck.slides.add_slide(deck.slide_layouts[1])
    slide.shapes.title.text = title
    frame = slide.placeholders[1].text_frame
    for i, point in enumerate(body):
        paragraph = frame.paragraphs[0] if i == 0 else frame.add_paragraph()
        paragraph.text = point
    if "table" in spec:
        rows = table(spec["table"], "slide table")
        width = max(len(r) for r in rows)
        shape = slide.shapes.add_table(
            len(rows), width, Inches(0.5), Inches(4.5), Inches(9), Inches(0.4 * len(rows))
        )
        for r, row in enumerate(rows):
            for c, text in enumerate(row):
                shape.table.cell(r, c).text = text
    notes = spec.get("notes")
    if isinstance(notes, str) and notes:
        slide.notes_slide.notes_text_frame.text = notes

"""Changes to an existing document (the `edit_document` tool's `edits`, applied in order).

Each edit is one object:

- `{"replace": "old text", "with": "new text"}`: every occurrence, in paragraphs and table cells
  (.docx), text frames and tables (.pptx) or text cells (.xlsx); none found is an error.
- `{"table": 1, "row": 2, "col": 3, "text": "..."}`: one table cell, all 1-based (.docx; with
  `"slide": N` for .pptx, the slide's first table).
- `{"cell": "B2", "value": 3.5, "sheet": "Totals"}`: one cell (.xlsx; the first sheet by default).
- `{"append_row": [...], "sheet": "Totals"}` (.xlsx), `{"append": BLOCK}` (.docx, a block as
  `write_document` takes it), `{"append_slide": {"title": ..., "body": [...]}}` (.pptx),
  `{"slide": N, "title": "..."}` (.pptx: a slide's new title).

A PDF is not edited in place: `write_document` writes a new one, and the `pdf_*` tools watermark,
fill, merge and split.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ioh_tui.documents.reading import DocumentError
from ioh_tui.documents.writing import add_docx_block, add_slide, blocks, cell_value

Edit = Mapping[str, Any]


def edit(path: Path, edits: list[Edit], out: Path) -> None:
    """Apply `edits` to the document at `path` and save the result at `out`."""
    if not edits or not all(isinstance(e, dict) for e in edits):
        raise DocumentError("edits must be a non-empty list of edit objects")
    suffix = path.suffix.lower()
    if suffix == ".docx":
        _docx(path, edits, out)
    elif suffix == ".xlsx":
        _xlsx(path, edits, out)
    elif suffix == ".pptx":
        _pptx(path, edits, out)
    elif suffix == ".pdf":
        raise DocumentError(
            "a PDF is not edited in place: write a new one with write_document, or use "
            "pdf_watermark, pdf_fill_form, pdf_merge or pdf_split"
        )
    else:
        raise DocumentError(f"{path.name} is not a .docx, .xlsx or .pptx document")


def _index(edit: Edit, key: str, count: int, what: str) -> int:
    value = edit.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= count:
        raise DocumentError(f"{key} must be 1 to {count} (the {what}s there are)")
    return value - 1


def _replace_in_paragraph(paragraph: Any, old: str, new: str) -> int:
    """Replace in one paragraph; within a run when it can (keeping its formatting)."""
    found: int = paragraph.text.count(old)
    if not found:
        return 0
    runs = paragraph.runs
    if any(old in run.text for run in runs) and sum(run.text.count(old) for run in runs) == found:
        for run in runs:
            run.text = run.text.replace(old, new)
        return found
    # The text spans runs: the paragraph keeps its first run's formatting.
    text = paragraph.text.replace(old, new)
    for run in runs[1:]:
        run.text = ""
    if runs:
        runs[0].text = text
    return found


def _texts(edit: Edit) -> tuple[str, str]:
    old, new = edit.get("replace"), edit.get("with")
    if not isinstance(old, str) or not old or not isinstance(new, str):
        raise DocumentError('a replace edit is {"replace": "old text", "with": "new text"}')
    return old, new


def _docx(path: Path, edits: list[Edit], out: Path) -> None:
    import docx

    document = docx.Document(str(path))
    for i, change in enumerate(edits):
        if "replace" in change:
            old, new = _texts(change)
            paragraphs = list(document.paragraphs)
            for grid in document.tables:
                for row in grid.rows:
                    for cell in row.cells:
                        paragraphs.extend(cell.paragraphs)
            if not sum(_replace_in_paragraph(p, old, new) for p in paragraphs):
                raise DocumentError(f"edits[{i}]: {old!r} is not in the document")
        elif "table" in change:
            grid = document.tables[_index(change, "table", len(document.tables), "table")]
            row = _index(change, "row", len(grid.rows), "row")
            col = _index(change, "col", len(grid.columns), "column")
            grid.cell(row, col).text = _text(change, "text")
        elif "append" in change:
            for block in blocks({"blocks": [change["append"]]}):
                add_docx_block(document, block)
        else:
            raise DocumentError(f"edits[{i}]: a .docx takes replace, table/row/col/text or append")
    document.save(str(out))


def _text(edit: Edit, key: str) -> str:
    value = edit.get(key)
    if not isinstance(value, str):
        raise DocumentError(f"{key} must be a string")
    return value


def _xlsx(path: Path, edits: list[Edit], out: Path) -> None:
    import openpyxl

    book = openpyxl.load_workbook(path)
    for i, change in enumerate(edits):
        name = change.get("sheet", book.sheetnames[0])
        if name not in book.sheetnames:
            raise DocumentError(
                f"edits[{i}]: no sheet {name!r}; the sheets are {', '.join(book.sheetnames)}"
            )
        ws = book[name]
        if "cell" in change:
            ref = _text(change, "cell").upper()
            try:
                ws[ref].value = cell_value(change.get("value"))
            except (ValueError, AttributeError):
                raise DocumentError(f"edits[{i}]: {ref!r} is not one cell (like B2)") from None
        elif "append_row" in change:
            row = change["append_row"]
            if not isinstance(row, list):
                raise DocumentError(f"edits[{i}]: append_row is a list of cell values")
            ws.append([cell_value(v) for v in row])
        elif "replace" in change:
            old, new = _texts(change)
            hits = 0
            for row in ws.iter_rows():
                for cell in row:
                    if isinstance(cell.value, str) and old in cell.value:
                        hits += cell.value.count(old)
                        cell.value = cell.value.replace(old, new)
            if not hits:
                raise DocumentError(f"edits[{i}]: {old!r} is in no text cell of {name}")
        else:
            raise DocumentError(f"edits[{i}]: a .xlsx takes cell/value, append_row or replace")
    book.save(out)


def _pptx(path: Path, edits: list[Edit], out: Path) -> None:
    import pptx

    deck = pptx.Presentation(str(path))
    slides = list(deck.slides)
    for i, change in enumerate(edits):
        if "replace" in change:
            old, new = _texts(change)
            if not _pptx_replace(slides, old, new):
                raise DocumentError(f"edits[{i}]: {old!r} is on no slide")
        elif "append_slide" in change:
            add_slide(deck, change["append_slide"])
        elif "table" in change or "title" in change:
            _pptx_slide(slides, change, i)
        else:
            raise DocumentError(
                f"edits[{i}]: a .pptx takes replace, append_slide, slide/title or "
                "slide/table/row/col/text"
            )
    deck.save(str(out))


def _pptx_replace(slides: list[Any], old: str, new: str) -> int:
    from pptx.shapes.graphfrm import GraphicFrame

    hits = 0
    for slide in slides:
        for shape in slide.shapes:
            frames = [shape.text_frame] if shape.has_text_frame else []
            if isinstance(shape, GraphicFrame) and shape.has_table:
                frames += [c.text_frame for row in shape.table.rows for c in row.cells]
            for frame in frames:
                hits += sum(_replace_in_paragraph(p, old, new) for p in frame.paragraphs)
    return hits


def _pptx_slide(slides: list[Any], change: Edit, i: int) -> None:
    """A slide's new title, or one cell of its table."""
    from pptx.shapes.graphfrm import GraphicFrame

    slide = slides[_index(change, "slide", len(slides), "slide")]
    if "table" not in change:
        if slide.shapes.title is None:
            raise DocumentError(f"edits[{i}]: slide {change['slide']} has no title")
        slide.shapes.title.text = _text(change, "title")
        return
    tables = [s for s in slide.shapes if isinstance(s, GraphicFrame) and s.has_table]
    grid = tables[_index(change, "table", len(tables), "table")].table
    row = _index(change, "row", len(grid.rows), "row")
    col = _index(change, "col", len(grid.columns), "column")
    grid.cell(row, col).text = _text(change, "text")

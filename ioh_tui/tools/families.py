"""The tool families beyond the core set (interface.md §8), and when a run is offered each.

Every spec offered goes with every request, so a family is offered where it can be of use:
`registry.offered` decides per run.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ioh_tui.documents import KINDS
from ioh_tui.media import DEFAULT_FRAMES, MAX_FRAMES
from ioh_tui.tools.base import Tool
from ioh_tui.tools.documents import (
    edit_document,
    pdf_fill_form,
    pdf_merge,
    pdf_split,
    pdf_watermark,
    read_document,
    write_document,
)
from ioh_tui.tools.git import (
    git_add,
    git_branch,
    git_commit,
    git_diff,
    git_log,
    git_show,
    git_status,
    git_switch,
)
from ioh_tui.tools.scans import barcode_read, barcode_write, ocr
from ioh_tui.tools.specs import BOOLEAN, POSITIVE, STRING, STRINGS, spec
from ioh_tui.tools.view import view_image

_PATH = {"path": {**STRING, "description": "workspace-relative; omitted: the whole repository"}}
GIT_TOOLS = (
    Tool(
        spec("git_status", "The branch and the staged, unstaged and untracked paths.", _PATH, []),
        git_status,
    ),
    Tool(
        spec(
            "git_diff",
            "The patch of unstaged changes; staged=true: of the staged ones; rev: against a "
            "revision (or `A..B` between two).",
            {**_PATH, "staged": BOOLEAN, "rev": STRING},
            [],
        ),
        git_diff,
    ),
    Tool(
        spec(
            "git_log",
            "The latest commits (hash, date, author, subject), newest first.",
            {**_PATH, "max_count": {**POSITIVE, "maximum": 200}},
            [],
        ),
        git_log,
    ),
    Tool(
        spec("git_show", "One commit: header, message and patch.", {"rev": STRING}, ["rev"]),
        git_show,
    ),
    Tool(
        spec(
            "git_add",
            "Stage paths for the next commit.",
            {"paths": {"type": "array", "items": STRING, "minItems": 1}},
            ["paths"],
        ),
        git_add,
        mutating=True,
    ),
    Tool(
        spec(
            "git_commit",
            "Commit what is staged with a message (git hooks are not run; nothing is pushed).",
            {"message": STRING},
            ["message"],
        ),
        git_commit,
        mutating=True,
    ),
    Tool(
        spec(
            "git_branch",
            "List the branches, or create one named `name` at HEAD (without switching to it).",
            {"name": STRING, "list": BOOLEAN},
            [],
        ),
        git_branch,
        mutating=True,
    ),
    Tool(
        spec("git_switch", "Switch the work tree to a branch.", {"name": STRING}, ["name"]),
        git_switch,
        mutating=True,
    ),
)


_OBJECT = {"type": "object"}
_PAGES = {**STRING, "description": "1-based, like 1-3,5; omitted: all"}
DOCUMENT_TOOLS = (
    Tool(
        spec(
            "read_document",
            "Read a .docx, .xlsx, .pptx or .pdf as text with its structure: headings (#), "
            "tables as | rows |, sheets by name (cells as REF=value; formulas as written), "
            "slides and pages by number, a PDF's form fields.",
            {
                "path": STRING,
                "pages": _PAGES,
                "sheet": STRING,
                "range": {**STRING, "description": "cells of the sheet, like A1:C10"},
            },
            ["path"],
        ),
        read_document,
    ),
    Tool(
        spec(
            "write_document",
            "Create or replace a .docx, .xlsx, .pptx or .pdf. content for .docx/.pdf: "
            '{"blocks": [{"heading": "T", "level": 1}, {"paragraph": "..."}, '
            '{"bullets": ["a"]}, {"table": [["h1", "h2"], ["a", "b"]]}, {"page_break": true}]}; '
            '.xlsx: {"sheets": [{"name": "S", "rows": [["item", 3.5, "=SUM(B1:B2)"]]}]}; '
            '.pptx: {"slides": [{"title": "T", "body": ["point"], "notes": "...", '
            '"table": [["a", "b"]]}]}.',
            {"path": STRING, "content": _OBJECT},
            ["path", "content"],
        ),
        write_document,
        mutating=True,
    ),
    Tool(
        spec(
            "edit_document",
            "Change a .docx, .xlsx or .pptx; edits apply in order, each one of: "
            '{"replace": "old", "with": "new"}; {"table": 1, "row": 2, "col": 3, "text": "..."} '
            '(.docx; add "slide": N for .pptx); {"cell": "B2", "value": 3.5, "sheet": "S"}; '
            '{"append_row": [...], "sheet": "S"}; {"append": BLOCK} (.docx); '
            '{"append_slide": {"title": "T", "body": ["..."]}}; {"slide": N, "title": "T"}.',
            {"path": STRING, "edits": {"type": "array", "items": _OBJECT, "minItems": 1}},
            ["path", "edits"],
        ),
        edit_document,
        mutating=True,
    ),
    Tool(
        spec(
            "pdf_watermark",
            "Stamp text diagonally across every page (or the chosen pages) of a PDF.",
            {"path": STRING, "text": STRING, "output": STRING, "pages": _PAGES},
            ["path", "text"],
        ),
        pdf_watermark,
        mutating=True,
    ),
    Tool(
        spec(
            "pdf_fill_form",
            "Fill a PDF's form fields (name -> value); without fields, list them.",
            {"path": STRING, "fields": _OBJECT, "output": STRING},
            ["path"],
        ),
        pdf_fill_form,
        mutating=True,
    ),
    Tool(
        spec(
            "pdf_merge",
            "Concatenate PDFs, in order, into output.",
            {"paths": STRINGS, "output": STRING},
            ["paths", "output"],
        ),
        pdf_merge,
        mutating=True,
    ),
    Tool(
        spec(
            "pdf_split",
            "Write the chosen pages of a PDF to output.",
            {"path": STRING, "pages": _PAGES, "output": STRING},
            ["path", "pages", "output"],
        ),
        pdf_split,
        mutating=True,
    ),
)

SCAN_TOOLS = (
    Tool(
        spec(
            "ocr",
            "Read the text in an image (PNG, JPEG, GIF, WebP, BMP, TIFF) or in one page of a "
            "scanned PDF (page: 1-based, default 1) with OCR.",
            {"path": STRING, "page": POSITIVE},
            ["path"],
        ),
        ocr,
    ),
    Tool(
        spec(
            "barcode_read",
            "Read every barcode and QR code in an image: its format and the text it holds.",
            {"path": STRING},
            ["path"],
        ),
        barcode_read,
    ),
    Tool(
        spec(
            "barcode_write",
            "Write data as a code image (.png or .svg): kind qr (default), code128, or ean13 "
            "(12 digits; the check digit is added).",
            {"path": STRING, "data": STRING, "kind": {"enum": ["qr", "code128", "ean13"]}},
            ["path", "data"],
        ),
        barcode_write,
        mutating=True,
    ),
)

VIEW_IMAGE = Tool(
    spec(
        "view_image",
        "Look at a workspace image (PNG, JPEG, GIF or WebP): it is shown to you with this "
        "call's result, scaled down if large. A video (MP4, MOV, WebM, MKV, AVI...) is shown as "
        f"still frames: `frames` evenly spaced (default {DEFAULT_FRAMES}), or the frames at the "
        f"times `at` (seconds from the start); at most {MAX_FRAMES}.",
        {
            "path": STRING,
            "frames": {**POSITIVE, "maximum": MAX_FRAMES},
            "at": {
                "type": "array",
                "items": {"type": "number", "minimum": 0},
                "minItems": 1,
                "maxItems": MAX_FRAMES,
            },
        },
        ["path"],
    ),
    view_image,
)

_IMAGES = re.compile(
    r"\.(png|jpe?g|gif|webp|mp4|mov|m4v|webm|mkv|avi)\b"
    r"|\b(images?|screenshots?|pictures?|photos?|videos?|screen ?recordings?)\b",
    re.I,
)
_SCANS = re.compile(r"\b(ocr|scan(ned|s)?|barcodes?|qr|ean-?13|code ?128)\b", re.I)

_NAMED = re.compile(
    r"\.(docx|xlsx|pptx|pdf)\b|\b(word|excel|powerpoint|spreadsheet|slides?|pdf)\b", re.I
)
_LOOK = 2_000
"""Entries of the workspace looked at for a document before deciding there is none."""


def wants_scans(hints: str) -> bool:
    """Whether the task names OCR, a scan, a barcode or a QR code (the scan tools' specs)."""
    return bool(_SCANS.search(hints))


def wants_images(hints: str) -> bool:
    """Whether the task names an image or a video.

    `view_image` is offered then even to a text-only model, whose call is answered that it cannot
    see images.
    """
    return bool(_IMAGES.search(hints))


def wants_documents(root: Path, hints: str) -> bool:
    """Whether a run may need the document tools.

    Yes when the task names a document (an extension, or Word, Excel, a PDF...) or the workspace
    holds one within its first `_LOOK` entries (dependency and hidden folders skipped).
    """
    if _NAMED.search(hints):
        return True
    seen = 0
    for _, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in _SKIP]
        for name in files:
            if os.path.splitext(name)[1].lower() in KINDS:
                return True
        seen += len(files) + len(dirs)
        if seen > _LOOK:
            return False
    return False


_SKIP = frozenset({"node_modules", "target", "__pycache__", "venv", "build", "dist"})

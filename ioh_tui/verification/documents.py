"""DocumentContains: a .docx, .xlsx, .pptx or .pdf must contain a text once its text is extracted.

The distinction is the whole criterion. These formats are zips or compressed object graphs, so
reading their bytes as text yields nothing, and a content criterion over the raw bytes would report
"does not contain" for every document: silently never passing, which looks like an agent that could
not do the work rather than a gate that could never say yes. So the reader is chosen by extension,
and any other extension is a configuration error, never a fallback to the bytes.

The readers are optional (`pip install 'ioh-tui[documents]'`): without the one a document needs,
evaluating is a `ConfigError` naming the extra (the criterion still exists and round-trips; loud
beats absent). Like every content criterion this is gameable: it proves what the document says,
not that it is right.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from ioh_tui.core.errors import ConfigError
from ioh_tui.sandbox.base import Sandbox
from ioh_tui.verification.base import GateOutcome, InWorkspace, resolve_in

EXTRA = "ioh-tui[documents]"
READERS = {".docx": "python-docx", ".xlsx": "openpyxl", ".pptx": "python-pptx", ".pdf": "pypdf"}
"""Extension → the distribution that reads it."""
MAX_BYTES = 64 * 1024 * 1024
"""A document larger than this is not opened (its text would not fit any observation anyway)."""

_SPACE = re.compile(r"\s+")


def _missing(suffix: str) -> ConfigError:
    return ConfigError(
        f"DocumentContains needs {READERS[suffix]} to read {suffix} files: "
        f"install the optional extra `{EXTRA}`"
    )


def _docx_text(path: Path) -> Iterator[str]:
    try:
        import docx
        from docx.table import Table
    except ImportError:
        raise _missing(".docx") from None

    def table_text(table: Table) -> Iterator[str]:
        for row in table.rows:
            for cell in row.cells:
                for paragraph in cell.paragraphs:
                    yield paragraph.text
                for inner in cell.tables:
                    yield from table_text(inner)

    document = docx.Document(str(path))
    for paragraph in document.paragraphs:
        yield paragraph.text
    for table in document.tables:
        yield from table_text(table)
    for section in document.sections:
        for part in (section.header, section.footer):
            for paragraph in part.paragraphs:
                yield paragraph.text


def _xlsx_text(path: Path) -> Iterator[str]:
    try:
        import openpyxl
    except ImportError:
        raise _missing(".xlsx") from None
    # data_only: a formula cell reads as its last computed value, which is what a person sees.
    book = openpyxl.load_workbook(path, read_only=True, data_only=True)
    try:
        for sheet in book.worksheets:
            yield sheet.title
            for row in sheet.iter_rows(values_only=True):
                yield "\t".join("" if value is None else str(value) for value in row)
    finally:
        book.close()


def _pptx_text(path: Path) -> Iterator[str]:
    try:
        import pptx
        from pptx.shapes.base import BaseShape
        from pptx.shapes.graphfrm import GraphicFrame
        from pptx.shapes.group import GroupShape
    except ImportError:
        raise _missing(".pptx") from None

    def shape_text(shape: BaseShape) -> Iterator[str]:
        if isinstance(shape, GroupShape):
            for inner in shape.shapes:
                yield from shape_text(inner)
        elif isinstance(shape, GraphicFrame) and shape.has_table:
            for row in shape.table.rows:
                for cell in row.cells:
                    yield cell.text
        elif shape.has_text_frame:
            yield shape.text_frame.text  # type: ignore[attr-defined]

    presentation = pptx.Presentation(str(path))
    for slide in presentation.slides:
        for shape in slide.shapes:
            yield from shape_text(shape)
        if slide.has_notes_slide and slide.notes_slide.notes_text_frame is not None:
            yield slide.notes_slide.notes_text_frame.text


def _pdf_text(path: Path) -> Iterator[str]:
    try:
        import pypdf
    except ImportError:
        raise _missing(".pdf") from None
    reader = pypdf.PdfReader(str(path))
    for page in reader.pages:
        yield page.extract_text()


_EXTRACT = {".docx": _docx_text, ".xlsx": _xlsx_text, ".pptx": _pptx_text, ".pdf": _pdf_text}


def extract_text(path: Path) -> str:
    """The visible text of a document, chosen by its extension.

    Raises:
        ConfigError: the extension is not a supported document, or its reader is not installed.
        Exception: whatever the reader raises for a file it cannot parse.
    """
    suffix = path.suffix.lower()
    reader = _EXTRACT.get(suffix)
    if reader is None:
        raise ConfigError(
            f"DocumentContains reads {', '.join(READERS)} files; {path.name} is none of them"
        )
    return "\n".join(reader(path))


def _squash(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


@dataclass(frozen=True, slots=True)
class DocumentContains(InWorkspace):
    """A document under the workspace root contains `needle` in its extracted text."""

    file: str
    needle: str
    kind: ClassVar[str] = "document_contains"
    stored: ClassVar[tuple[str, ...]] = ("file", "needle")
    single_file: ClassVar[bool | None] = False
    runs_commands: ClassVar[bool] = False

    def __post_init__(self) -> None:
        # Refuse an unsupported extension when the contract is made, not at the first gate.
        if Path(self.file).suffix.lower() not in READERS:
            raise ConfigError(
                f"DocumentContains reads {', '.join(READERS)} files; {self.file!r} is none of "
                "them (use WorkspaceFileContains for a text file)"
            )

    def describe(self) -> str:
        """The criterion, for the model."""
        return f"the document {self.file} must contain the text {self.needle!r} (in its text)"

    async def passes_in(
        self, root: Path, sandbox: Sandbox | None = None, *, scratch: Path | None = None
    ) -> GateOutcome:
        """Extract the document's text and look for the needle.

        A missing, oversized or unreadable document fails (it is what the agent produced).
        Whitespace is compared collapsed, because extraction (PDF above all) does not keep a
        document's line breaks and spacing as typed.

        Raises:
            ConfigError: the reader for this extension is not installed.
        """
        path = resolve_in(root, self.file)
        if not path.is_file():
            return GateOutcome("failed", f"{self.file} does not exist")
        if path.stat().st_size > MAX_BYTES:
            return GateOutcome("failed", f"{self.file} is over {MAX_BYTES // 2**20} MB")
        try:
            # Parsing a large document takes a while; keep the event loop free meanwhile.
            text = await asyncio.to_thread(extract_text, path)
        except ConfigError:
            raise
        except Exception as exc:  # any parse failure of a produced file is a failed check
            kind = path.suffix.lower()
            return GateOutcome("failed", f"{self.file} could not be read as {kind}: {exc!r}")
        if self.needle in text or _squash(self.needle) in _squash(text):
            return GateOutcome("passed", f"{self.file} contains the text")
        return GateOutcome("failed", f"{self.file} does not contain the text")

    async def evaluate(
        self,
        root: Path,
        subject: str | None,
        sandbox: Sandbox | None = None,
        *,
        scratch: Path | None = None,
    ) -> GateOutcome:
        """Evaluate in the workspace; a missing reader is `errored` (the gate could not say)."""
        try:
            return await self.passes_in(root)
        except ConfigError as exc:
            return GateOutcome("errored", str(exc))

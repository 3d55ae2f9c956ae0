"""DocumentContains: text extracted from generated documents, never their raw bytes."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from ioh_tui.core.errors import ConfigError
from ioh_tui.verification import DocumentContains, WorkspaceFileContains
from ioh_tui.verification.documents import extract_text
from tests.unit.verification.documents_fixtures import make_docx, make_pdf, make_pptx, make_xlsx


async def test_docx_paragraph_table_and_header(tmp_path: Path) -> None:
    make_docx(tmp_path / "r.docx", "The launch is on Friday.", cell="Budget: 40k", header="DRAFT")
    for needle in ("launch is on Friday", "Budget: 40k", "DRAFT"):
        assert await DocumentContains("r.docx", needle).passes_in(tmp_path)
    outcome = await DocumentContains("r.docx", "Monday").passes_in(tmp_path)
    assert outcome.status == "failed" and "does not contain" in outcome.detail


async def test_the_raw_bytes_never_contain_what_the_document_says(tmp_path: Path) -> None:
    # The reason the criterion exists: a zip's bytes do not hold its visible text.
    make_docx(tmp_path / "r.docx", "The launch is on Friday.")
    assert not await WorkspaceFileContains("r.docx", "launch").passes_in(tmp_path)
    assert await DocumentContains("r.docx", "launch").passes_in(tmp_path)


async def test_xlsx_cells_and_sheet_title(tmp_path: Path) -> None:
    make_xlsx(tmp_path / "b.xlsx", [["region", "total"], ["north", 1234.5]], title="Q3")
    assert await DocumentContains("b.xlsx", "north").passes_in(tmp_path)
    assert await DocumentContains("b.xlsx", "1234.5").passes_in(tmp_path)
    assert await DocumentContains("b.xlsx", "Q3").passes_in(tmp_path)
    assert not await DocumentContains("b.xlsx", "south").passes_in(tmp_path)


async def test_pptx_title_notes_and_table(tmp_path: Path) -> None:
    make_pptx(tmp_path / "d.pptx", "Roadmap 2026", notes="speak slowly", table="Milestone A")
    for needle in ("Roadmap 2026", "speak slowly", "Milestone A"):
        assert await DocumentContains("d.pptx", needle).passes_in(tmp_path)
    assert not await DocumentContains("d.pptx", "Roadmap 2027").passes_in(tmp_path)


async def test_pdf_text_with_whitespace_compared_collapsed(tmp_path: Path) -> None:
    make_pdf(tmp_path / "p.pdf", ["Quarterly revenue grew", "by 12 percent"])
    assert await DocumentContains("p.pdf", "revenue grew").passes_in(tmp_path)
    # The line break between the two shown lines is not how the sentence was meant.
    assert await DocumentContains("p.pdf", "grew by 12 percent").passes_in(tmp_path)
    assert not await DocumentContains("p.pdf", "13 percent").passes_in(tmp_path)


async def test_extension_is_case_insensitive(tmp_path: Path) -> None:
    make_docx(tmp_path / "R.DOCX", "upper case name")
    assert await DocumentContains("R.DOCX", "upper case").passes_in(tmp_path)


@pytest.mark.parametrize("name", ["notes.txt", "data.csv", "old.doc", "noext", "x.docx.bak"])
def test_any_other_extension_is_an_error_not_a_fallback(name: str) -> None:
    with pytest.raises(ConfigError, match=r"reads \.docx, \.xlsx, \.pptx, \.pdf"):
        DocumentContains(name, "x")
    with pytest.raises(ConfigError):
        extract_text(Path(name))


async def test_missing_and_corrupt_documents_fail(tmp_path: Path) -> None:
    missing = await DocumentContains("none.pdf", "x").passes_in(tmp_path)
    assert missing.status == "failed" and "does not exist" in missing.detail
    (tmp_path / "bad.docx").write_bytes(b"this is not a zip")
    corrupt = await DocumentContains("bad.docx", "zip").passes_in(tmp_path)
    assert corrupt.status == "failed" and "could not be read as .docx" in corrupt.detail


async def test_a_path_outside_the_workspace_is_errored(tmp_path: Path) -> None:
    outcome = await DocumentContains("../x.pdf", "x").evaluate(tmp_path, None)
    assert outcome.status == "errored" and "outside the workspace" in outcome.detail


@pytest.mark.parametrize(
    ("module", "name", "dist"),
    [
        ("docx", "a.docx", "python-docx"),
        ("openpyxl", "a.xlsx", "openpyxl"),
        ("pptx", "a.pptx", "python-pptx"),
        ("pypdf", "a.pdf", "pypdf"),
    ],
)
async def test_a_missing_reader_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, module: str, name: str, dist: str
) -> None:
    (tmp_path / name).write_bytes(b"whatever")
    monkeypatch.setitem(sys.modules, module, None)  # makes `import module` raise ImportError
    criterion = DocumentContains(name, "x")
    with pytest.raises(ConfigError, match=rf"needs {dist} .* `ioh-tui\[documents\]`"):
        await criterion.passes_in(tmp_path)
    # In a run the gate could not say yes or no: errored, never failed.
    outcome = await criterion.evaluate(tmp_path, None)
    assert outcome.status == "errored" and "ioh-tui[documents]" in outcome.detail


def test_describe_names_the_document_and_the_text() -> None:
    text = DocumentContains("out/report.docx", "Total: 42").describe()
    assert "out/report.docx" in text and "'Total: 42'" in text

"""The document worker's answers: a missing library names itself, bad requests are answers."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from ioh_tui.documents import worker
from ioh_tui.documents.reading import DocumentError, page_numbers
from ioh_tui.tools.families import wants_documents
from ioh_tui.tools.registry import offered


def test_a_missing_library_is_named(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / "a.docx").write_bytes(b"")
    monkeypatch.setitem(sys.modules, "docx", None)  # import docx raises ImportError
    answer = worker.run({"op": "read", "path": str(tmp_path / "a.docx")})
    assert answer == {"ok": False, "error": answer["error"], "missing": "docx"}


def test_bad_requests_are_answers(tmp_path: Path) -> None:
    assert worker.run({"op": "read"})["ok"] is False
    assert "not a .docx" in worker.run({"op": "read", "path": str(tmp_path / "a.txt")})["error"]


@pytest.mark.parametrize(
    ("spec", "count", "expected"),
    [(None, 3, [1, 2, 3]), ("2", 3, [2]), ("1-2,3", 3, [1, 2, 3]), ("3,1", 4, [3, 1])],
)
def test_page_numbers(spec: str | None, count: int, expected: list[int]) -> None:
    assert page_numbers(spec, count) == expected


@pytest.mark.parametrize("spec", ["0", "4", "2-1", "a", "1-2-3"])
def test_bad_page_numbers(spec: str) -> None:
    with pytest.raises(DocumentError):
        page_numbers(spec, 3)


def test_document_tools_are_offered_where_they_can_be_of_use(tmp_path: Path) -> None:
    def names(hints: str = "") -> set[str]:
        return {t.spec.name for t in offered("workspace", tree=False, root=tmp_path, hints=hints)}

    (tmp_path / "node_modules").mkdir()
    (tmp_path / "node_modules" / "readme.pdf").write_bytes(b"")
    assert "read_document" not in names("fix the failing test")
    assert "write_document" in names("write the summary to report.docx")
    assert "pdf_merge" in names("Merge the PDF files")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "costs.XLSX").write_bytes(b"")
    assert wants_documents(tmp_path, "")

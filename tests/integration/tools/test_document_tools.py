"""The document tools on real files, the libraries running in the real sandbox (bubblewrap).

Written documents are read back by `read_document` and pass `DocumentContains`; an edit changes a
table cell; a watermark is on every page; filled form fields read back; merge and split count
pages; the person asked sees the document's text before and after.
"""

from __future__ import annotations

import io
import shutil
from pathlib import Path
from typing import Any

import pypdf
import pytest

from ioh_tui.core.acts import Act
from ioh_tui.policy import Policy
from ioh_tui.sandbox.bwrap import BwrapSandbox
from ioh_tui.tools import Refusal, ToolContext, ToolSet
from ioh_tui.tools.base import Permit, ToolResult
from ioh_tui.tools.families import DOCUMENT_TOOLS
from ioh_tui.verification.documents import DocumentContains
from tests.unit.tools.context import context

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bwrap")

TOOLS = ToolSet(DOCUMENT_TOOLS)
REPORT = {
    "blocks": [
        {"heading": "Quarterly report", "level": 1},
        {"paragraph": "Revenue rose by 12 percent."},
        {"bullets": ["tea", "coffee"]},
        {"table": [["item", "cost"], ["tea", "3.50"], ["coffee", "4.00"]]},
    ]
}
CONTENT = {
    "report.docx": REPORT,
    "report.pdf": REPORT,
    "costs.xlsx": {
        "sheets": [
            {"name": "Costs", "rows": [["item", "cost"], ["tea", 3.5], ["sum", "=SUM(B2:B2)"]]}
        ]
    },
    "deck.pptx": {
        "slides": [
            {"title": "Plan", "body": ["Ship the report", "Review costs"], "notes": "say hello"},
            {"title": "Costs", "body": [], "table": [["item", "cost"], ["tea", "3.50"]]},
        ]
    },
}


class Asking:
    """Permits everything and keeps each decision's keyword arguments."""

    def __init__(self) -> None:
        self.asked: list[dict[str, Any]] = []

    async def __call__(self, act: Act, target: str, **kw: Any) -> Permit:
        self.asked.append({"act": act, "target": target, **kw})
        return Permit(target, kw.get("content"))


def ctx_on(root: Path, policy: Policy | None = None) -> ToolContext:
    ctx = context(root, policy or Policy.permissive())
    ctx.sandbox = BwrapSandbox()
    ctx.entry_cap = 50_000
    return ctx


async def call(ctx: ToolContext, tool: str, /, **args: object) -> ToolResult:
    return await TOOLS.dispatch(tool, args, ctx)


@pytest.mark.parametrize("name", sorted(CONTENT))
async def test_a_written_document_reads_back_and_passes_document_contains(
    tmp_path: Path, name: str
) -> None:
    ctx = ctx_on(tmp_path)
    written = await call(ctx, "write_document", path=name, content=CONTENT[name])
    assert written.ok and written.changed, written.output
    read = await call(ctx, "read_document", path=name)
    assert read.ok, read.output
    needle = {"costs.xlsx": "tea", "deck.pptx": "Ship the report"}.get(name, "Revenue rose by 12")
    assert needle in read.output
    outcome = await DocumentContains(name, needle).passes_in(tmp_path)
    assert outcome.status == "passed", outcome.detail


async def test_structure_is_shown(tmp_path: Path) -> None:
    ctx = ctx_on(tmp_path)
    for name, content in CONTENT.items():
        assert (await call(ctx, "write_document", path=name, content=content)).ok
    docx = (await call(ctx, "read_document", path="report.docx")).output
    assert "## Quarterly report" in docx and "- tea" in docx
    assert "| item | cost |" in docx and "| tea | 3.50 |" in docx
    xlsx = (await call(ctx, "read_document", path="costs.xlsx", sheet="Costs")).output
    assert "sheets: Costs" in xlsx and "B3==SUM(B2:B2)" in xlsx
    ranged = (await call(ctx, "read_document", path="costs.xlsx", range="A2:B2")).output
    assert "A2=tea  B2=3.5" in ranged and "A1=item" not in ranged
    deck = (await call(ctx, "read_document", path="deck.pptx", pages="2")).output
    assert "## slide 2: Costs" in deck and "| tea | 3.50 |" in deck and "Plan" not in deck
    pdf = (await call(ctx, "read_document", path="report.pdf", pages="1")).output
    assert "pages: 1" in pdf and "## page 1" in pdf
    missing = await call(ctx, "read_document", path="costs.xlsx", sheet="Nope")
    assert not missing.ok and "no sheet 'Nope'" in missing.output


async def test_edit_changes_a_table_cell_and_shows_the_change(tmp_path: Path) -> None:
    ctx = ctx_on(tmp_path)
    await call(ctx, "write_document", path="report.docx", content=REPORT)
    asking = Asking()
    ctx.decide = asking
    edited = await call(
        ctx,
        "edit_document",
        path="report.docx",
        edits=[{"table": 1, "row": 2, "col": 2, "text": "3.75"}, {"replace": "12", "with": "15"}],
    )
    assert edited.ok and edited.changed, edited.output
    (write,) = [a for a in asking.asked if a["act"] is Act.WRITE]
    assert "-| tea | 3.50 |" in write["preview"] and "+| tea | 3.75 |" in write["preview"]
    read = (await call(ctx, "read_document", path="report.docx")).output
    assert "| tea | 3.75 |" in read and "Revenue rose by 15 percent." in read
    for name, edits in (
        ("costs.xlsx", [{"cell": "B2", "value": 9.25, "sheet": "Costs"}]),
        ("deck.pptx", [{"slide": 2, "table": 1, "row": 2, "col": 2, "text": "9.25"}]),
    ):
        await call(ctx, "write_document", path=name, content=CONTENT[name])
        assert (await call(ctx, "edit_document", path=name, edits=edits)).ok
        assert "9.25" in (await call(ctx, "read_document", path=name)).output


async def test_a_refused_write_leaves_no_file_and_a_bad_edit_is_told(tmp_path: Path) -> None:
    ctx = ctx_on(tmp_path, Policy.default().layer("t").deny_write("*.docx"))
    refused = await call(ctx, "write_document", path="report.docx", content=REPORT)
    assert refused.refused and not (tmp_path / "report.docx").exists()
    ctx = ctx_on(tmp_path)
    await call(ctx, "write_document", path="report.docx", content=REPORT)
    before = (tmp_path / "report.docx").read_bytes()
    bad = await call(
        ctx, "edit_document", path="report.docx", edits=[{"replace": "absent", "with": "x"}]
    )
    assert not bad.ok and "'absent' is not in the document" in bad.output
    assert (tmp_path / "report.docx").read_bytes() == before
    content = await call(ctx, "write_document", path="x.docx", content={"blocks": [{"chart": 1}]})
    assert not content.ok and "exactly one of heading" in content.output


def _form(path: Path) -> None:
    from reportlab.pdfgen import canvas

    sheet = canvas.Canvas(str(path))
    sheet.drawString(72, 720, "Name:")
    sheet.acroForm.textfield(name="name", x=120, y=710, width=200, height=20)
    sheet.drawString(72, 680, "City:")
    sheet.acroForm.textfield(name="city", x=120, y=670, width=200, height=20)
    sheet.save()


def _pages(path: Path, count: int) -> None:
    from reportlab.pdfgen import canvas

    sheet = canvas.Canvas(str(path))
    for n in range(1, count + 1):
        sheet.drawString(72, 720, f"page {n} of {path.stem}")
        sheet.showPage()
    sheet.save()


async def test_pdf_operations(tmp_path: Path) -> None:
    ctx = ctx_on(tmp_path)
    _pages(tmp_path / "a.pdf", 3)
    _pages(tmp_path / "b.pdf", 2)
    marked = await call(
        ctx, "pdf_watermark", path="a.pdf", text="CONFIDENTIAL", output="marked.pdf"
    )
    assert marked.ok, marked.output
    reader = pypdf.PdfReader(io.BytesIO((tmp_path / "marked.pdf").read_bytes()))
    assert len(reader.pages) == 3
    assert all("CONFIDENTIAL" in page.extract_text() for page in reader.pages)
    merged = await call(ctx, "pdf_merge", paths=["a.pdf", "b.pdf"], output="all.pdf")
    assert merged.ok and len(pypdf.PdfReader(tmp_path / "all.pdf").pages) == 5
    split = await call(ctx, "pdf_split", path="all.pdf", pages="2,4-5", output="some.pdf")
    assert split.ok, split.output
    texts = [p.extract_text() for p in pypdf.PdfReader(tmp_path / "some.pdf").pages]
    assert ["page 2 of a" in texts[0], "page 1 of b" in texts[1], "page 2 of b" in texts[2]] == [
        True
    ] * 3
    _form(tmp_path / "form.pdf")
    listed = await call(ctx, "pdf_fill_form", path="form.pdf")
    assert "2 fields" in listed.output and "city = ''" in listed.output
    filled = await call(
        ctx,
        "pdf_fill_form",
        path="form.pdf",
        fields={"name": "Ada", "city": "London"},
        output="filled.pdf",
    )
    assert filled.ok, filled.output
    fields = pypdf.PdfReader(tmp_path / "filled.pdf").get_fields() or {}
    assert fields["name"].get("/V") == "Ada" and fields["city"].get("/V") == "London"
    unknown = await call(ctx, "pdf_fill_form", path="form.pdf", fields={"zip": "1"})
    assert not unknown.ok and "no field zip" in unknown.output


async def test_a_hostile_document_is_contained(tmp_path: Path) -> None:
    """A file that is not what its name says fails in the worker, never in the harness."""
    (tmp_path / "fake.docx").write_bytes(b"PK\x03\x04 not really a zip")
    result = await call(ctx_on(tmp_path), "read_document", path="fake.docx")
    assert not result.ok and result.output.startswith("[read_document error]")


async def test_a_denied_read_is_refused_before_the_worker_runs(tmp_path: Path) -> None:
    ctx = ctx_on(tmp_path)
    await call(ctx, "write_document", path="report.docx", content=REPORT)
    ctx = ctx_on(tmp_path, Policy.default().layer("t").deny_read("*.docx"))
    refused = await call(ctx, "read_document", path="report.docx")
    assert refused.refused and "Revenue" not in refused.output
    assert isinstance(await ctx.decide(Act.READ, "report.docx"), Refusal)

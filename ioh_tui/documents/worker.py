"""The document worker: `python -I -m ioh_tui.documents.worker REQUEST.json`, run in the sandbox.

It reads one request (an operation and its arguments, paths relative to its working directory,
the workspace), does it, and prints one JSON object: `{"ok": true, "text": ..., "data": ...}` or
`{"ok": false, "error": ..., "missing": NAME, "install": HINT}` (`missing`: a library of an
extra, or a program, is not installed; `install`, when given, says how to get it). The tools
check every act with the policy before starting it; the worker only works.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ioh_tui.documents import editing, pdfops, reading, scan, writing

MAX_TEXT = 2_000_000
"""Characters of text the worker prints at most (the tool caps what the model reads far lower)."""

Op = Callable[[Mapping[str, Any]], dict[str, Any]]


def _read(req: Mapping[str, Any]) -> dict[str, Any]:
    text = reading.render(
        Path(req["path"]), pages=req.get("pages"), sheet=req.get("sheet"), cells=req.get("range")
    )
    return {"text": text}


def _rendered(path: Path) -> str:
    return reading.render(path) if path.exists() else ""


def _write(req: Mapping[str, Any]) -> dict[str, Any]:
    path = Path(req["path"])
    before = _rendered(path) if req.get("compare") else ""
    with _sibling(path) as tmp:
        writing.write(tmp, req["content"])
        after = reading.render(tmp)
        if not req.get("dry_run"):
            os.replace(tmp, path)
    return {"before": before, "after": after, "existed": path.exists()}


def _edit(req: Mapping[str, Any]) -> dict[str, Any]:
    path = Path(req["path"])
    if not path.is_file():
        raise reading.DocumentError(f"{req['path']} does not exist")
    before = reading.render(path)
    with _sibling(path) as tmp:
        editing.edit(path, list(req["edits"]), tmp)
        after = reading.render(tmp)
        if not req.get("dry_run"):
            os.replace(tmp, path)
    return {"before": before, "after": after}


def _pdf(req: Mapping[str, Any]) -> dict[str, Any]:
    op, out = req["op"], Path(req.get("output") or req.get("path") or "")
    if op == "pdf_fields":
        return {"data": pdfops.form_fields(Path(req["path"]))}
    with _sibling(out) as tmp:
        if op == "pdf_watermark":
            done: Any = pdfops.watermark(Path(req["path"]), req["text"], tmp, req.get("pages"))
        elif op == "pdf_fill_form":
            done = pdfops.fill_form(Path(req["path"]), req["fields"], tmp)
        elif op == "pdf_merge":
            done = pdfops.merge([Path(p) for p in req["paths"]], tmp)
        else:
            done = pdfops.split(Path(req["path"]), req["pages"], tmp)
        os.replace(tmp, out)
    return {"data": done, "text": _rendered(out)}


def _ocr(req: Mapping[str, Any]) -> dict[str, Any]:
    return {"text": scan.ocr(Path(req["path"]), req.get("page"))}


def _barcode_read(req: Mapping[str, Any]) -> dict[str, Any]:
    return {"data": scan.read_codes(Path(req["path"]))}


def _barcode_write(req: Mapping[str, Any]) -> dict[str, Any]:
    path = Path(req["path"])
    with _sibling(path) as tmp:
        held = scan.write_code(tmp, req["data"], req.get("kind") or "qr")
        os.replace(tmp, path)
    return {"data": held}


class _sibling:
    """A temporary file beside `path` (same directory: the final rename cannot cross devices)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __enter__(self) -> Path:
        fd, name = tempfile.mkstemp(
            prefix=f".{self.path.stem}.", suffix=self.path.suffix, dir=self.path.parent or "."
        )
        os.close(fd)
        self.tmp = Path(name)
        return self.tmp

    def __exit__(self, *exc: object) -> None:
        self.tmp.unlink(missing_ok=True)


OPS: dict[str, Op] = {
    "read": _read,
    "write": _write,
    "edit": _edit,
    "pdf_fields": _pdf,
    "pdf_watermark": _pdf,
    "pdf_fill_form": _pdf,
    "pdf_merge": _pdf,
    "pdf_split": _pdf,
    "ocr": _ocr,
    "barcode_read": _barcode_read,
    "barcode_write": _barcode_write,
}


def run(req: Mapping[str, Any]) -> dict[str, Any]:
    """Do one request; every failure is an answer, never a traceback."""
    try:
        answer = OPS[req["op"]](req)
    except ImportError as exc:
        return {"ok": False, "error": str(exc), "missing": exc.name or "?"}
    except scan.Missing as exc:
        return {"ok": False, "error": str(exc), "missing": exc.name, "install": exc.hint}
    except reading.DocumentError as exc:
        return {"ok": False, "error": str(exc)}
    except (KeyError, TypeError) as exc:
        return {"ok": False, "error": f"bad request: {exc!r}"}
    except Exception as exc:  # a library's failure on a file it cannot parse or write
        return {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
    for key in ("text", "before", "after"):
        if isinstance(answer.get(key), str) and len(answer[key]) > MAX_TEXT:
            answer[key] = answer[key][:MAX_TEXT]
    return {"ok": True, **answer}


def main(argv: list[str]) -> int:
    """Read the request file named by `argv[1]`, print the answer."""
    req = json.loads(Path(argv[1]).read_text(encoding="utf-8"))
    sys.stdout.write(json.dumps(run(req)) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

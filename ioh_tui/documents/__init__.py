"""Office documents and PDFs for the model: read with structure, write, edit, and PDF operations.

The parsing and writing libraries (python-docx, openpyxl, python-pptx, pypdf, reportlab) run in a
worker process inside the run's sandbox (`worker.py`), never in the harness: a document is
untrusted input (zip bombs, deep XML), so it is parsed where a crash, a runaway allocation or a
hang is capped and contained like any command. The tools in `tools/documents.py` decide the acts
and start the worker; this package is what the worker runs.

The libraries are the optional extra `ioh-tui[documents]`; without it the tools say which extra to
install.
"""

EXTRA = "ioh-tui[documents]"
KINDS = (".docx", ".xlsx", ".pptx", ".pdf")
"""The document formats, by extension."""

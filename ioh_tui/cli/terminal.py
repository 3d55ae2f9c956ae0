r"""The command line's two writers: lines for a person, and JSON lines for a program.

Every human line goes through `say`: configured keys masked and control characters shown as
`\xNN` (`core/shown.py`), whatever the text's source (a model's words, a stored run, an error).
JSON lines go through `say_json`: JSON already escapes control characters, so the value stays
exact; keys are masked there too.
"""

from __future__ import annotations

import sys

from ioh_tui.core.redact import Redactor
from ioh_tui.core.shown import shown


def say(text: str = "", *, err: bool = False) -> None:
    """Write one line for a person to stdout (`err`: stderr), flushed."""
    stream = sys.stderr if err else sys.stdout
    stream.write(shown(text) + "\n")
    stream.flush()


def say_json(line: str) -> None:
    """Write one JSON line to stdout, flushed."""
    sys.stdout.write(Redactor.configured().text(line) + "\n")
    sys.stdout.flush()

"""What is wrong with a store file, said in one line that names the file (exit 2 on the CLI).

`StoreError` and `damaged` live in `ioh_tui.dbfile` (the command line checks a store file without
loading this package) and are the same objects here.
"""

from __future__ import annotations

import json
from typing import Any

from ioh_tui.dbfile.errors import StoreError, damaged

__all__ = ["StoreError", "damaged", "decoded"]


def decoded(text: str, path: str, what: str) -> Any:
    """A JSON column's value; `StoreError` naming the file and the row when it is not JSON.

    Args:
        text: the column's text.
        path: the store file, for the message.
        what: the row and column, for the message (`run 3's contract`).
    """
    try:
        return json.loads(text)
    except (json.JSONDecodeError, TypeError, RecursionError) as exc:
        reason = exc.msg if isinstance(exc, json.JSONDecodeError) else type(exc).__name__
        raise StoreError(f"store {path} is damaged: {what} is not JSON ({reason})") from None

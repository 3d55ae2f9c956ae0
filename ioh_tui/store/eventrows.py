"""An event's JSON as the `events` row keeps it: without what the row's columns already hold.

The engine's events lead with `event`, `run_id` and (in a flat run) `step`, and the row holds
the same three in its `kind`, `run_id` and `step` columns (`agent_id` too, in a tree). A row
written since this module keeps its JSON as `[LEAD, REST]`: LEAD names the leading keys left
out, in order (`e` event, `r` run_id, `a` agent_id, `s` step), each taken back from its column
on read; REST is the rest of the object, compact. A key is left out only when its column gives
back exactly its value (an `int` for the numbers), and only as a leading run, so the object
read is the one written, key order included. A row written before (a JSON object) reads as it
is: no schema change, and version 6 rows still read.
"""

from __future__ import annotations

import json
from typing import Any

_COLUMNS = {"event": "e", "run_id": "r", "agent_id": "a", "step": "s"}
_KEYS = {code: key for key, code in _COLUMNS.items()}


def pack(data: dict[str, Any], *, kind: str, run_id: int, agent_id: int | None) -> str:
    """`data` as the row's `json` column keeps it (its `step` column is `data.get("step")`)."""
    held = {"event": kind, "run_id": run_id, "agent_id": agent_id, "step": data.get("step")}
    lead = []
    for key, value in data.items():
        code = _COLUMNS.get(key)
        if code is None or code in lead or not _same(value, held[key]):
            break
        lead.append(code)
    rest = dict(list(data.items())[len(lead) :]) if lead else data
    return json.dumps(["".join(lead), rest], separators=(",", ":"))


def unpack(stored: Any, *, kind: str, run_id: int, agent_id: int | None, step: Any) -> Any:
    """The object `pack` was given, from the decoded column and the row's other columns.

    A row written before `pack` (a JSON object) is returned as it is.
    """
    if not isinstance(stored, list):
        return stored
    lead, rest = stored
    held = {"e": kind, "r": run_id, "a": agent_id, "s": step}
    data = {_KEYS[code]: held[code] for code in lead}
    data.update(rest)
    return data


def _same(value: Any, column: Any) -> bool:
    """Whether the column gives back exactly `value` (1 for True would not)."""
    if isinstance(value, str):
        return bool(value == column)
    return type(value) is int and type(column) is int and value == column

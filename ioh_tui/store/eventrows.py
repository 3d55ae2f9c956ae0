"""An event's JSON as the `events` row keeps it: without what the row's columns already hold.

The engine's events lead with `event`, `run_id` and (in a flat run) `step`, and the row holds
the same three in its `kind`, `run_id` and `step` columns (`agent_id` too, in a tree). A row
keeps its JSON as `[LEAD, ...]`: LEAD names the leading keys left out, in order (`e` event,
`r` run_id, `a` agent_id, `s` step), each taken back from its column on read. A key is left out
only when its column gives back exactly its value (an `int` for the numbers), and only as a
leading run, so the object read is the one written, key order included.

The rest of the object follows LEAD in one of two forms:

- `[LEAD, REST]`: REST the rest as a compact object (rows written under schema 6, and an event
  with nothing after LEAD);
- `[LEAD, K, V1, V2, ...]` (schema 7): the rest's values in order, K the id of its key names
  in `event_keys`. Every event of a kind has the same keys, so a step's five events spell out
  about 190 bytes of names fewer (`KeySets` finds or adds each list of names once).

A row written before either (a JSON object) reads as it is.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable, Mapping
from typing import Any

_COLUMNS = {"event": "e", "run_id": "r", "agent_id": "a", "step": "s"}
_KEYS = {code: key for key, code in _COLUMNS.items()}

Names = tuple[str, ...]
"""An event's key names after LEAD, in order."""


def pack(
    data: dict[str, Any],
    *,
    kind: str,
    run_id: int,
    agent_id: int | None,
    names: Callable[[Names], int] | None = None,
) -> str:
    """`data` as the row's `json` column keeps it (its `step` column is `data.get("step")`).

    Args:
        data: the event's JSON object.
        kind: the row's `kind` column.
        run_id: the row's `run_id` column.
        agent_id: the row's `agent_id` column.
        names: the id of a list of key names (`KeySets.id_of`); without it, the rest is kept
            as an object.
    """
    held = {"event": kind, "run_id": run_id, "agent_id": agent_id, "step": data.get("step")}
    lead = []
    for key, value in data.items():
        code = _COLUMNS.get(key)
        if code is None or code in lead or not _same(value, held[key]):
            break
        lead.append(code)
    items = list(data.items())[len(lead) :] if lead else list(data.items())
    if names is None or not items:
        return json.dumps(["".join(lead), dict(items)], separators=(",", ":"))
    keys = tuple(key for key, _ in items)
    return json.dumps(
        ["".join(lead), names(keys), *(value for _, value in items)], separators=(",", ":")
    )


def unpack(
    stored: Any,
    *,
    kind: str,
    run_id: int,
    agent_id: int | None,
    step: Any,
    names: Mapping[int, Names] | None = None,
) -> Any:
    """The object `pack` was given, from the decoded column and the row's other columns.

    A row written before `pack` (a JSON object) is returned as it is.

    Raises:
        ValueError: the row is not one `pack` writes, or names a list of keys not in `names`
            (the store is damaged).
    """
    if not isinstance(stored, list):
        return stored
    if not stored or not isinstance(stored[0], str) or any(c not in _KEYS for c in stored[0]):
        raise ValueError("not a packed event")
    lead = stored[0]
    held = {"e": kind, "r": run_id, "a": agent_id, "s": step}
    data = {_KEYS[code]: held[code] for code in lead}
    if len(stored) == 2 and isinstance(stored[1], dict):
        data.update(stored[1])
        return data
    if len(stored) < 2 or type(stored[1]) is not int:
        raise ValueError("not a packed event")
    keys = (names or {}).get(stored[1])
    if keys is None:
        raise ValueError(f"its key names {stored[1]} are not in the store")
    data.update(zip(keys, stored[2:], strict=True))
    return data


def named(stored: Any) -> int | None:
    """The id of the key names a decoded row refers to, if it refers to any."""
    if isinstance(stored, list) and len(stored) > 2 and type(stored[1]) is int:
        return stored[1]
    return None


class KeySets:
    """The lists of key names in `event_keys` this store has met, by id and by names.

    Learned as they are met and never changed once committed, so each is looked up in the
    store once per open store. A list added by a transaction is learned only once that
    transaction has committed (`learn`): one rolled back leaves no id behind.
    """

    def __init__(self) -> None:
        self._ids: dict[Names, int] = {}
        self._names: dict[int, Names] = {}

    def id_of(self, conn: sqlite3.Connection, keys: Names, fresh: dict[Names, int]) -> int:
        """The id of `keys` (added to `event_keys`, and to `fresh`, if new), in a transaction.

        The transaction holds the store's write lock, so two processes never add the same list.
        """
        known = self._ids.get(keys)
        if known is None:
            known = fresh.get(keys)
        if known is not None:
            return known
        text = json.dumps(keys, separators=(",", ":"))
        row = conn.execute("SELECT id FROM event_keys WHERE keys = ?", (text,)).fetchone()
        if row is None:
            rowid = conn.execute("INSERT INTO event_keys (keys) VALUES (?)", (text,)).lastrowid
            assert rowid is not None
            fresh[keys] = rowid
        else:
            fresh[keys] = int(row[0])
        return fresh[keys]

    def learn(self, fresh: Mapping[Names, int]) -> None:
        """Keep what a committed transaction added or found."""
        self._ids.update(fresh)
        self._names.update((i, keys) for keys, i in fresh.items())

    def names_of(self, conn: sqlite3.Connection, ids: Iterable[int]) -> Mapping[int, Names]:
        """The names of each of `ids` found in the store (read outside a transaction)."""
        missing = sorted(set(ids) - self._names.keys())
        for start in range(0, len(missing), 500):
            chunk = missing[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for i, text in conn.execute(
                f"SELECT id, keys FROM event_keys WHERE id IN ({marks})", chunk
            ):
                keys = tuple(json.loads(text))
                self._names[i] = keys
                self._ids.setdefault(keys, i)
        return self._names


def _same(value: Any, column: Any) -> bool:
    """Whether the column gives back exactly `value` (1 for True would not)."""
    if isinstance(value, str):
        return bool(value == column)
    return type(value) is int and type(column) is int and value == column

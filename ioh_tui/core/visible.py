r"""Control characters made visible before any text reaches the operator's terminal.

The model chooses much of what is printed and drawn (its text, tool arguments, paths, argv, tool
output, summaries, notes, error details). A raw escape sequence there is an instruction to the
terminal: OSC 52 writes the clipboard, OSC 0 retitles the window, CSI moves the cursor or hides
text. So every C0 control character but newline and tab, DEL, and every C1 control character is
shown as its escape, `\x1b` for ESC, `\x9b` for CSI: four visible characters, never the byte.

`visible` is applied where text leaves for a person: the command line's writers, and the app where
events and stored rows enter it. JSON output is not passed through it: JSON escapes control
characters itself, and keeps the exact value.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

_KEPT = frozenset({"\n", "\t"})
_CONTROLS = [c for c in (*range(0x20), 0x7F, *range(0x80, 0xA0)) if chr(c) not in _KEPT]
_TABLE = {c: f"\\x{c:02x}" for c in _CONTROLS}
_CONTROL_SET = frozenset(chr(c) for c in _CONTROLS)

T = TypeVar("T")


def visible(text: str) -> str:
    r"""`text` with every control character but newline and tab shown as `\xNN`."""
    # Most text has none: checking first avoids building a copy of every line printed.
    if _CONTROL_SET.isdisjoint(text):
        return text
    return text.translate(_TABLE)


def map_strings(value: T, fn: Callable[[str], str]) -> T:
    """`value` with `fn` applied to every string inside it.

    Walks dicts (their keys too), lists, tuples and dataclass instances (frozen ones are
    replaced, not mutated); anything else is returned as it is. A value with nothing to change
    is returned itself, so a walk over clean data allocates nothing.
    """
    return _map(value, fn)  # type: ignore[no-any-return]


def _map(value: Any, fn: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        new = fn(value)
        # An enum member that is a str stays itself when nothing in it changed.
        return value if new == value else new
    if isinstance(value, dict):
        items = [(_map(k, fn), _map(v, fn)) for k, v in value.items()]
        if all(k is k0 and v is v0 for (k, v), (k0, v0) in zip(items, value.items(), strict=True)):
            return value
        return dict(items)
    if isinstance(value, list | tuple):
        mapped = [_map(v, fn) for v in value]
        if all(m is v for m, v in zip(mapped, value, strict=True)):
            return value
        return type(value)(mapped) if isinstance(value, list) else tuple(mapped)
    # What `dataclasses.is_dataclass` checks; the module itself (and `inspect` through it) is
    # imported only for a dataclass, so `ioh-tui --version` does not load it.
    if hasattr(type(value), "__dataclass_fields__"):
        import dataclasses

        changes = {}
        for field in dataclasses.fields(value):
            if not field.init:
                continue
            old = getattr(value, field.name)
            new = _map(old, fn)
            if new is not old:
                changes[field.name] = new
        return dataclasses.replace(value, **changes) if changes else value
    return value

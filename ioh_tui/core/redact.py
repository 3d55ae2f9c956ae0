"""Keys masked out of everything the harness stores, emits, prints or draws.

A configured key is the value of a provider key variable (`OPENAI_API_KEY`, any `*_API_KEY`) or a
key handed to a provider in this process (`hold`, called by the providers' `Secret`). Either can
come back where it was never meant to be: a server echoing it in an error event, a command on the
floor rung printing its environment, a model repeating what a tool showed it. `Redactor` replaces
every occurrence with `[redacted]`; `Redactor.stream` does the same for text that arrives in
pieces, holding back the end of a piece only while it could be the start of a key.

Values shorter than eight characters are not keys (a placeholder `x` for a local server): masking
them would shred every message and protect nothing.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import TypeVar

from ioh_tui.core.visible import map_strings

KEY_VARIABLES = ("OPENROUTER_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_API_KEY")
"""The variables the providers read their keys from; any other `*_API_KEY` counts too."""
MASK = "[redacted]"
MIN_KEY_LEN = 8

_held: set[str] = set()

T = TypeVar("T")


def hold(value: str | None) -> None:
    """Remember `value` as a key of this process: every `Redactor` made later masks it."""
    if value and len(value) >= MIN_KEY_LEN:
        _held.add(value)


def is_key_variable(name: str) -> bool:
    """Whether an environment variable of this name holds a key."""
    return name in KEY_VARIABLES or name.upper().endswith("_API_KEY")


def configured_keys() -> frozenset[str]:
    """Every key this process holds or its environment configures."""
    found = {v for k, v in os.environ.items() if is_key_variable(k) and len(v) >= MIN_KEY_LEN}
    return frozenset(found | _held)


class Redactor:
    """Masks a fixed set of keys (`configured()`: the ones configured now)."""

    __slots__ = ("_keys",)

    def __init__(self, keys: Iterable[str] = ()) -> None:
        # Longest first: a key that contains another is masked whole.
        self._keys = tuple(sorted({k for k in keys if len(k) >= MIN_KEY_LEN}, key=len)[::-1])

    @classmethod
    def configured(cls) -> Redactor:
        """A redactor for every key configured in this process now."""
        return cls(configured_keys())

    def __bool__(self) -> bool:
        return bool(self._keys)

    def __repr__(self) -> str:
        return f"Redactor({len(self._keys)} keys)"

    def text(self, text: str) -> str:
        """`text` with every key masked, and every cut key (half of it or more).

        A key cut short where text was capped (tool output, an error message) is still most of
        a key: the first half or more of one is masked as a whole one is.
        """
        text = self.whole_keys(text)
        for key in self._keys:
            text = _mask_heads(text, key)
        return text

    def whole_keys(self, text: str) -> str:
        """`text` with every whole key masked (cut ones are left)."""
        for key in self._keys:
            if key in text:
                text = text.replace(key, MASK)
        return text

    def value(self, value: T) -> T:
        """`value` (an event, a row, a JSON value) with every key in every string masked."""
        return map_strings(value, self.text) if self._keys else value

    def stream(self, emit: Callable[[str], None]) -> RedactedStream:
        """A sink for text in pieces that hands `emit` the same text with keys masked."""
        return RedactedStream(self, emit)

    def partial(self, text: str) -> int:
        """How long the longest end of `text` that begins a key is (a whole key is not counted)."""
        best = 0
        for key in self._keys:
            for n in range(min(len(key) - 1, len(text)), best, -1):
                if text.endswith(key[:n]):
                    best = n
                    break
        return best


class RedactedStream:
    """Pieces in, pieces out with keys masked, even a key split across pieces.

    The end of a piece that could begin a key is held until the next piece says whether it does;
    `flush` hands over what is held when the stream ends.
    """

    __slots__ = ("_emit", "_held", "_redactor")

    def __init__(self, redactor: Redactor, emit: Callable[[str], None]) -> None:
        self._redactor = redactor
        self._emit = emit
        self._held = ""

    def feed(self, piece: str) -> None:
        """Take one piece; emit what is certainly not part of a key."""
        if not self._redactor:
            self._emit(piece)
            return
        # Whole keys first; an end that may still grow into one is held back; what goes out has
        # cut keys masked too (a cut key reaching its end would have been held instead).
        text = self._redactor.whole_keys(self._held + piece)
        keep = self._redactor.partial(text)
        self._held = text[len(text) - keep :] if keep else ""
        out = self._redactor.text(text[: len(text) - keep])
        if out:
            self._emit(out)

    def flush(self) -> None:
        """Emit what is held (the stream ended: it was not a key)."""
        held, self._held = self._held, ""
        if held:
            self._emit(self._redactor.text(held))


def _mask_heads(text: str, key: str) -> str:
    """`text` with each run that begins like `key` (half of it at least) masked."""
    head = key[: max(MIN_KEY_LEN, len(key) // 2)]
    if head not in text:
        return text
    out: list[str] = []
    i = 0
    while (j := text.find(head, i)) >= 0:
        k, n = j + len(head), len(head)
        while k < len(text) and n < len(key) and text[k] == key[n]:
            k, n = k + 1, n + 1
        out += [text[i:j], MASK]
        i = k
    out.append(text[i:])
    return "".join(out)

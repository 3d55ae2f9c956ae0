"""What a person may be shown: configured keys masked, control characters visible.

The one rule for every text that reaches the operator, the command line's lines and the app's
widgets alike: keys are masked first (`core/redact.py`), then control characters are escaped
(`core/visible.py`), whatever the text's source.
"""

from __future__ import annotations

from typing import TypeVar

from ioh_tui.core.redact import Redactor
from ioh_tui.core.visible import map_strings, visible

T = TypeVar("T")


def shown(text: str, redactor: Redactor | None = None) -> str:
    """`text` safe to show (`redactor`: the keys to mask; default, those configured now)."""
    keys = Redactor.configured() if redactor is None else redactor
    return visible(keys.text(text))


def drawable(value: T, redactor: Redactor | None = None) -> T:
    """`value` (an event, a request, a stored row) with every string in it safe to show."""
    keys = Redactor.configured() if redactor is None else redactor
    return map_strings(value, lambda text: visible(keys.text(text)))

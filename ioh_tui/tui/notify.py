"""Desktop notifications through the terminal, when asked for: a decision waits on you.

Opt-in, with `IOH_TUI_NOTIFY`: `osc9` (iTerm2, WezTerm, Windows Terminal, Ghostty) or `osc777`
(foot, WezTerm, urxvt, VTE terminals that carry the patch). The terminal shows the notification,
so it works over ssh and needs nothing installed; a terminal that does not know the sequence
ignores it. Off by default, because which one a terminal speaks cannot be asked.
"""

from __future__ import annotations

from typing import Literal

from ioh_tui.core.errors import ConfigError
from ioh_tui.tui.describe import one_line, visible

NOTIFY_ENV = "IOH_TUI_NOTIFY"
"""The variable naming the notification sequence (unset or empty: no notifications)."""
Style = Literal["osc9", "osc777"]
STYLES: tuple[Style, ...] = ("osc9", "osc777")
LONGEST = 120
"""Characters of a notification's text (a desktop notification is a glance, not a read)."""


def notify_style(value: str) -> Style | None:
    """The style `IOH_TUI_NOTIFY` names (empty: None).

    Raises:
        ConfigError: Any other value (one line naming the variable and the choices).
    """
    value = value.strip().lower()
    if not value:
        return None
    if value not in STYLES:
        raise ConfigError(f"{NOTIFY_ENV}={value!r}: use {' or '.join(STYLES)} (or leave it unset)")
    return value


def sequence(style: Style, title: str, body: str) -> str:
    """The escape sequence that asks the terminal for a notification.

    Both texts are cut to one line, their control characters shown as escapes (a target may carry
    any bytes: none may end the sequence or start another) and, for `osc777`, the field separator
    `;` replaced.
    """
    title, body = (visible(one_line(text, LONGEST))[0] for text in (title, body))
    if style == "osc9":
        return f"\x1b]9;{title}: {body}\x07"
    title, body = title.replace(";", ","), body.replace(";", ",")
    return f"\x1b]777;notify;{title};{body}\x07"

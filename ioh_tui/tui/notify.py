"""Terminal signals: the bell, the window title, and desktop notifications when asked for.

Notifications are opt-in, with `IOH_TUI_NOTIFY`: `osc9` (iTerm2, WezTerm, Windows Terminal,
Ghostty) or `osc777` (foot, WezTerm, urxvt, VTE terminals that carry the patch). The terminal shows
the notification, so it works over ssh and needs nothing installed; a terminal that does not know
the sequence ignores it. Off by default, because which one a terminal speaks cannot be asked.

Every signal is one escape sequence written through one `TerminalWriter`: the app's writes to its
terminal, a test's records what was written.
"""

from __future__ import annotations

from typing import Literal, Protocol

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


BELL = "\x07"
"""The terminal bell."""


def title_sequence(title: str) -> str:
    """The escape sequence that sets the terminal window title (OSC 2)."""
    return f"\x1b]2;{title}\x07"


class TerminalWriter(Protocol):
    """Where terminal signals are written: the app's terminal, or a test's recorder."""

    def write(self, sequence: str) -> None:
        """Write one escape sequence to the terminal."""
        ...


class TerminalSignals:
    """The bell, the window title and desktop notifications, each written through one writer."""

    def __init__(self, writer: TerminalWriter, notify: Style | None = None) -> None:
        self.writer = writer
        """Where every signal goes."""
        self.notify = notify
        """The desktop notification sequence for a waiting decision (None: none)."""
        self.title = "ioh-tui"
        """The window title last set."""

    def waiting(self, what: str) -> None:
        """A decision waits: ring the bell, say so in the title, notify if asked to."""
        self.writer.write(BELL)
        self.set_title(f"ioh-tui — waiting on you: {what}")
        if self.notify is not None:
            self.writer.write(sequence(self.notify, "ioh-tui: waiting on you", what))

    def not_waiting(self, *, running: bool) -> None:
        """No decision waits any more: the title stops saying so."""
        if self.title.startswith("ioh-tui — waiting"):
            self.set_title("ioh-tui — running" if running else "ioh-tui")

    def set_title(self, title: str) -> None:
        """Set the window title (control characters shown as escapes: none can end it)."""
        self.title, _ = visible(title)
        self.writer.write(title_sequence(self.title))

"""The recording file of `--record` / `--replay`: JSON lines, a version header, one answer a line.

    {"ioh_tui": "0.1.0"}
    {"request": {...}, "completion": {...}}
    ...

Each answer is appended (and the file closed) as soon as the model gives it, so a run that
crashes or is killed leaves every answer it got, and a resume can replay them. Lines hold the
request and the completion only: no header, URL or key of the provider is ever written.
This module knows the file, not the exchanges' fields (those are `record.py`'s).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ioh_tui import __version__
from ioh_tui.core.errors import ConfigError

FORMAT_KEY = "ioh_tui"
"""The header line's one key; its value is the version of ioh-tui that wrote the file."""


def _line(value: Mapping[str, Any]) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")) + "\n"


def start_recording(path: Path) -> None:
    """Create (or empty) the file with its header.

    Raises:
        ConfigError: the file cannot be written.
    """
    try:
        path.write_text(_line({FORMAT_KEY: __version__}), encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot write recording {path}: {exc.strerror or exc}") from None


def append_exchange(path: Path, exchange: Mapping[str, Any]) -> None:
    """Append one exchange as a line (opened and closed each time: nothing waits in a buffer)."""
    with path.open("a", encoding="utf-8") as out:
        out.write(_line(exchange))


def write_recording(path: Path, exchanges: list[dict[str, Any]]) -> None:
    """Write a whole recording at once (atomically: a crash never leaves half a file)."""
    partial = path.with_name(f".{path.name}.partial")
    header = _line({FORMAT_KEY: __version__})
    partial.write_text(header + "".join(_line(e) for e in exchanges), encoding="utf-8")
    partial.replace(path)


def read_recording(path: Path) -> list[dict[str, Any]]:
    """The exchanges of a recording, as JSON objects.

    Raises:
        ConfigError: missing or unreadable, not a recording, written by another `major.minor`
            series, a line that is not a JSON object, or no answer at all.
    """
    try:
        # Split on "\n" only: JSON escapes it inside strings, but not U+2028 or U+0085, which
        # `splitlines` would also cut at.
        lines = path.read_text(encoding="utf-8").split("\n")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise ConfigError(f"cannot read recording {path}: {reason}") from None
    values = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ConfigError(
                f"recording {path} line {number} is not valid JSON: {exc.msg}"
            ) from None
        if not isinstance(value, dict):
            raise ConfigError(f"recording {path} line {number} is not a JSON object")
        values.append(value)
    header = values[0] if values else {}
    version = header.get(FORMAT_KEY)
    if not isinstance(version, str):
        raise ConfigError(f"{path} is not an ioh-tui recording (no {FORMAT_KEY!r} version)")
    if _series(version) != _series(__version__):
        raise ConfigError(
            f"recording {path} was made by ioh-tui {version}; this is {__version__}"
            f" and replays only recordings of the {_series(__version__)} series"
        )
    if len(values) == 1:
        raise ConfigError(f"recording {path} holds no answers")
    return values[1:]


def _series(version: str) -> str:
    return ".".join(version.split(".")[:2])

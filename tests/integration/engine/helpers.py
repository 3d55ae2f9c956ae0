"""Shared pieces of the engine tests: scenarios, a recording observer, the calc project's gate."""

from __future__ import annotations

import sys
from typing import Any

from ioh_tui.core.events import Event
from ioh_tui.providers import ScriptedProvider
from ioh_tui.providers.testing.scenario import parse_scenario
from ioh_tui.verification import Command

CHECK = Command([sys.executable, "check_calc.py"])
"""The calc project's own check: passes only once `add` adds."""

READ_CALC = {"name": "read_file", "arguments": {"path": "calc.py"}}
FIX_CALC = {
    "name": "edit_file",
    "arguments": {"path": "calc.py", "old_text": "a - b", "new_text": "a + b"},
}


def scripted(*turns: dict[str, Any], **extra: Any) -> ScriptedProvider:
    """A scripted model playing these turns."""
    return ScriptedProvider(parse_scenario({"model": "test-model", "turns": list(turns), **extra}))


class Recorder:
    """An observer that keeps every event."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def __call__(self, event: Event) -> None:
        self.events.append(event)

    def kinds(self) -> list[str]:
        """The kinds, in order."""
        return [e.kind for e in self.events]

    def of(self, kind: str) -> list[Any]:
        """The events of one kind."""
        return [e for e in self.events if e.kind == kind]

"""The note tool: short plain-text notes only."""

from __future__ import annotations

from pathlib import Path

import pytest

from ioh_tui.tools.note import MAX_NOTE_CHARS, note
from tests.unit.tools.context import context


async def test_a_plain_note_is_kept_as_written(tmp_path: Path) -> None:
    result = await note({"text": "  calc.py subtracts\n\tfix add()  "}, context(tmp_path))
    assert result.ok and result.output == "[noted] calc.py subtracts\n\tfix add()"


@pytest.mark.parametrize(
    "text",
    ["", "   ", "x" * (MAX_NOTE_CHARS + 1), "title\x1b]0;pwned\x07", "clip\x9b2J", "nul\x00"],
)
async def test_an_empty_long_or_escaping_note_is_refused(tmp_path: Path, text: str) -> None:
    result = await note({"text": text}, context(tmp_path))
    assert not result.ok and result.output.startswith("[note refused]")
    assert "\x1b" not in result.output and "\x9b" not in result.output

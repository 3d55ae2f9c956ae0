"""SVG snapshots of a long run in the app: the context meter, a compaction block, the notes."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.snapshots.apps.long_run import long_run
from tests.tui.harness import finished

SnapCompare = Callable[..., bool]
SIZE = (100, 32)

pytestmark = pytest.mark.snapshot


class TestLongRun:
    def test_compacted_run_with_notes(self, snap_compare: SnapCompare, tmp_path: Path) -> None:
        """You should see the run's last steps with the block `context compacted at step 7:
        2,481 → 1,763 tokens` between step 7's header and its `read f5.txt` (the counts move
        when the tools' descriptions do: they are in every request), the side panel's
        `context 2.1k / 3.0k` meter under the cost, the notes section holding `add subtracts: fix
        calc.py`, and `c Summary` in the key bar."""
        assert snap_compare(long_run(tmp_path), terminal_size=SIZE, run_before=finished)

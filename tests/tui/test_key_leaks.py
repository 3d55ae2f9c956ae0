"""Issue 18, item 9: the app never draws a configured key.

The key is in `OPENAI_API_KEY`; a scripted model repeats it in its text and in a command whose
output prints it back. Neither the run view nor the trace view renders it: both show it masked.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ioh_tui.policy import Policy
from ioh_tui.tui.history import History
from ioh_tui.tui.screens.trace import TraceScreen
from tests.tui.harness import USAGE, build, finished, until
from tests.tui.test_control_chars import rendered

KEY = "sk-test-APPCANARY-0123456789abcdefghij"


async def test_the_run_and_trace_views_draw_a_key_masked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    turns: list[dict[str, Any]] = [
        {
            "text": f"The key: {KEY}",
            "tool_calls": [{"name": "exec", "arguments": {"argv": ["echo", KEY]}}],
            "usage": USAGE,
        },
        {"text": "Done.", "usage": USAGE},
    ]
    app = build(tmp_path, *turns, policy=Policy.permissive(), criterion=None)
    async with app.run_test(size=(160, 60)) as pilot:
        await finished(pilot)
        run_view = rendered(app.screen)
        assert KEY not in run_view and KEY[:20] not in run_view
        assert "The key: [redacted]" in run_view

        app.push_screen(TraceScreen(History(tmp_path / "store.db"), 1))
        await until(
            pilot, lambda: isinstance(app.screen, TraceScreen) and app.screen.trace is not None
        )
        await pilot.pause()
        trace_view = rendered(app.screen)
        assert KEY not in trace_view and KEY[:20] not in trace_view
        assert "[redacted]" in trace_view

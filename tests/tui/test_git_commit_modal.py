"""The decision modal shows what a `git_commit` will contain, and a rewrite edits its message."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from textual.widgets import TextArea

from ioh_tui.core.acts import Act
from ioh_tui.policy import ApprovalRequest, Decision
from ioh_tui.tools import Refusal, ToolSet
from ioh_tui.tools.families import GIT_TOOLS
from ioh_tui.tools.registry import WORKSPACE_TOOLS
from ioh_tui.tui.screens.approval import ApprovalModal
from ioh_tui.tui.widgets.diff_view import DiffView
from tests.tui.apps.approval_app import ApprovalApp
from tests.unit.tools.context import context


def _stage_two_files(root: Path) -> None:
    env = {"GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1", "PATH": "/usr/bin:/bin"}
    for argv in (["init", "-q"], ["add", "a.py", "b.py"]):
        subprocess.run(["git", *argv], cwd=root, env=env, check=True)


async def _commit_request(root: Path) -> ApprovalRequest:
    """The request `git_commit` makes of its decider, as the engine would pass it to the app."""
    _stage_two_files(root)
    ctx = context(root)
    asked: list[dict[str, Any]] = []

    async def decide(act: Act, target: str, **kw: Any) -> Refusal:
        asked.append({"act": act, "target": target, **kw})
        return Refusal("[not now]")

    ctx.decide = decide
    result = await ToolSet((*WORKSPACE_TOOLS, *GIT_TOOLS)).dispatch(
        "git_commit", {"message": "Fix add\n\nIt subtracted."}, ctx
    )
    assert result.refused, result.output
    (ask,) = asked
    return ApprovalRequest(
        act=ask["act"], target=ask["target"], content=ask["content"], preview=ask["preview"]
    )


async def test_the_modal_shows_the_message_and_every_staged_path(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("a = 1\n")
    (tmp_path / "b.py").write_text("b = 2\n")
    request = await _commit_request(tmp_path)
    app = ApprovalApp(request, remember_file=tmp_path / "p.toml")
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        modal = app.screen
        assert isinstance(modal, ApprovalModal)
        body = modal.query_one(DiffView).body
        assert "commit 2 staged paths" in body and "Fix add" in body
        assert "A a.py" in body and "A b.py" in body
        await pilot.press("e")
        area = modal.query_one("#rewrite-text", TextArea)
        assert area.text == "Fix add\n\nIt subtracted."
        area.text = "Fix add()"
        await pilot.press("ctrl+s")
        await pilot.pause()
    assert app.decision == Decision.rewrite(content="Fix add()")

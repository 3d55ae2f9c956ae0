"""The decision modal alone: what it shows for each kind of ask, and the answers it returns."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Static, TextArea

from ioh_tui.core.acts import Act
from ioh_tui.policy import ApprovalRequest, Decision
from ioh_tui.tui.screens.approval import ApprovalModal
from ioh_tui.tui.widgets.diff_view import SYNC_LINES, DiffView
from tests.tui.apps.approval_app import ApprovalApp

EXEC = ApprovalRequest(
    act=Act.EXEC,
    target="pytest -q tests",
    rule="exec ask pytest*",
    layer="project",
    agent_label="agent 3",
    step=4,
)


def mode(modal: ApprovalModal) -> str:
    """The open form, read afresh (a key press changes it)."""
    return modal.mode


def modal_of(app: ApprovalApp) -> ApprovalModal:
    screen = app.screen
    assert isinstance(screen, ApprovalModal)
    return screen


async def test_a_command_names_its_rule_layer_and_agent_and_rewrites_the_command(
    tmp_path: Path,
) -> None:
    app = ApprovalApp(EXEC, remember_file=tmp_path / "p.toml")
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        modal = modal_of(app)
        why = str(modal.query_one("#ask-why", Static).render())
        who = str(modal.query_one("#ask-who", Static).render())
        assert "rule `exec ask pytest*` in layer `project`" in why
        assert "asked by agent 3 · step 4" in who
        assert modal.query_one(DiffView).kind == "command"
        await pilot.press("e")
        area = modal.query_one("#rewrite-text", TextArea)
        assert area.text == "pytest -q tests"
        await pilot.press("end", *" -x", "ctrl+s")
        await pilot.pause()
    assert app.decision == Decision.rewrite(target="pytest -q tests -x")


async def test_a_write_without_a_diff_shows_the_whole_content_and_says_so(tmp_path: Path) -> None:
    request = ApprovalRequest(act=Act.WRITE, target="notes.md", content="# Notes\n\nhello\n")
    app = ApprovalApp(request, remember_file=tmp_path / "p.toml")
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        modal = modal_of(app)
        assert modal.query_one(DiffView).kind == "content"
        assert "no diff: this is the whole new content" in str(
            modal.query_one("#ask-notice").render()
        )
        await pilot.press("d")
        await pilot.pause()
    assert app.decision == Decision.defer()


async def test_what_cannot_be_shown_is_said_and_remember_is_withheld(tmp_path: Path) -> None:
    content = "ok\x00\x00\x1b[2J"
    request = ApprovalRequest(act=Act.WRITE, target="blob.bin", content=content, preview=None)
    app = ApprovalApp(request, remember_file=tmp_path / "p.toml")
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        modal = modal_of(app)
        notice = str(modal.query_one("#ask-notice").render())
        assert "cannot show 2 NUL bytes" in notice and "1 control characters" in notice
        assert "\\x1b" in modal.query_one(DiffView).body
        await pilot.press("a")
        assert modal.mode == "choices"  # remembering a rule over unseen content is refused
        await pilot.press("n", *"binary", "enter")
        await pilot.pause()
    assert app.decision == Decision.deny("binary")


async def test_a_large_diff_is_highlighted_off_the_loop_and_never_cut(tmp_path: Path) -> None:
    lines = SYNC_LINES + 500
    preview = f"--- a/big.txt\n+++ b/big.txt\n@@ -1,1 +1,{lines} @@\n" + "".join(
        f"+line {i}\n" for i in range(lines)
    )
    request = ApprovalRequest(act=Act.WRITE, target="big.txt", content="x", preview=preview)
    app = ApprovalApp(request, remember_file=tmp_path / "p.toml")
    async with app.run_test(size=(100, 30)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        view = modal_of(app).query_one(DiffView)
        assert view._highlighted is not None and f"+line {lines - 1}" in view._highlighted.plain
        view.scroll_end(animate=False)
        await pilot.pause()
        assert view.max_scroll_y > lines - 40  # every line is there to scroll to


async def test_v_switches_to_a_split_view(tmp_path: Path) -> None:
    preview = "--- a/c.py\n+++ b/c.py\n@@ -1,1 +1,1 @@\n-a - b\n+a + b\n"
    request = ApprovalRequest(act=Act.WRITE, target="c.py", content="a + b\n", preview=preview)
    app = ApprovalApp(request, remember_file=tmp_path / "p.toml")
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        view = modal_of(app).query_one(DiffView)
        assert (view.split, view.has_class("-split")) == (False, False)
        await pilot.press("v")
        assert (view.split, view.has_class("-split")) == (True, True)
        await pilot.press("y")
        await pilot.pause()
    assert app.decision == Decision.approve()


async def test_esc_never_stops_the_run_it_opens_the_deny_reason_and_goes_back(
    tmp_path: Path,
) -> None:
    # As in Claude Code and Codex: escape is "no, and tell it why", never "throw the run away".
    app = ApprovalApp(EXEC, remember_file=tmp_path / "p.toml")
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        modal = modal_of(app)
        await pilot.press("escape")
        await pilot.pause()
        assert not app.stopped and app.screen is modal
        assert mode(modal) == "deny" and app.focused is modal.query_one("#deny-reason")
        await pilot.press("escape")  # the open sub-view closes: back to the choices
        assert mode(modal) == "choices" and not app.stopped
        await pilot.press("e", "escape")  # the same from the rewrite form
        assert mode(modal) == "choices" and app.screen is modal
        await pilot.press("escape", *"use -x", "enter")
        await pilot.pause()
    assert not app.stopped
    assert app.decision == Decision.deny("use -x")


@pytest.mark.parametrize("size", [(79, 23), (50, 12), (40, 8)])
async def test_a_small_terminal_says_it_cannot_show_the_action_and_keeps_the_keys(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    preview = "--- a/c.py\n+++ b/c.py\n@@ -1,1 +1,1 @@\n-a - b\n+a + b\n"
    request = ApprovalRequest(act=Act.WRITE, target="c.py", content="a + b\n", preview=preview)
    app = ApprovalApp(request, remember_file=tmp_path / "p.toml")
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        modal = modal_of(app)
        notice = str(modal.query_one("#ask-notice", Static).render())
        assert "terminal too small to show the action in full" in notice
        assert "shown in full" not in notice.replace("show the action in full", "")
        choices = modal.query_one("#choices", Static)
        # The answers are on screen, whole: inside the terminal and not cut short.
        region = choices.region
        assert region.height > 0 and region.bottom <= size[1], region
        lines = choices.render_lines(choices.region.reset_offset)
        assert "ctrl+c stop run" in " ".join(" ".join(line.text for line in lines).split())
        await pilot.press("a")  # remember waits for a terminal that shows the action
        assert mode(modal) == "choices"
        await pilot.resize_terminal(100, 30)
        await pilot.pause()
        notice = str(modal.query_one("#ask-notice", Static).render())
        assert notice == "shown in full"
        await pilot.press("y")
        await pilot.pause()
    assert app.decision == Decision.approve()

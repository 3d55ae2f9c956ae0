"""The decision modal: each of the five answers, given by its key, reaches the engine and acts."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Input, TextArea

from ioh_tui.policy import load_policy_file
from ioh_tui.store import Store
from ioh_tui.tui.screens.approval import ApprovalModal
from ioh_tui.tui.widgets.diff_view import DiffView
from ioh_tui.tui.widgets.tool_call import ToolCall
from tests.tui.harness import (
    FIX_CALC,
    FIXED,
    USAGE,
    build,
    finished,
    modal,
    run_screen,
    scripted,
    until,
)

ORIGINAL = "def add(a, b):\n    return a - b\n"


def write(path: str, content: str) -> dict[str, object]:
    return {
        "tool_calls": [{"name": "write_file", "arguments": {"path": path, "content": content}}],
        "usage": USAGE,
    }


async def test_the_modal_shows_act_target_why_who_and_the_diff(tmp_path: Path) -> None:
    app = build(tmp_path, {"tool_calls": [FIX_CALC], "usage": USAGE})
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await modal(pilot)
        text = " ".join(
            str(w.render()) for w in screen.query("#ask-title, #ask-why, #ask-who, #choices")
        )
        diff = screen.query_one(DiffView)
        assert "write  calc.py" in text and "default tier" in text and "asked by root" in text
        for answer in ("y approve", "e rewrite", "a remember", "n deny", "d defer"):
            assert answer in text
        assert (
            diff.kind == "diff"
            and "-    return a - b" in diff.body
            and "+    return a + b" in diff.body
        )
        assert screen.notices == []
        await pilot.press("y")
        await finished(pilot)


async def test_y_approves_and_the_file_is_written(tmp_path: Path) -> None:
    app = build(tmp_path, {"tool_calls": [FIX_CALC], "usage": USAGE})
    async with app.run_test(size=(100, 30)) as pilot:
        await modal(pilot)
        await pilot.press("y")
        await finished(pilot)
    assert app.result is not None and app.result.outcome == "success"
    assert (tmp_path / "project" / "calc.py").read_text() == FIXED


async def test_e_rewrites_in_place_and_the_rewritten_content_is_written(tmp_path: Path) -> None:
    app = build(tmp_path, {"tool_calls": [FIX_CALC], "usage": USAGE})
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await modal(pilot)
        await pilot.press("e")
        area = screen.query_one("#rewrite-text", TextArea)
        assert area.has_focus and area.text == FIXED
        await pilot.press("down", "end", *" # reviewed", "ctrl+s")
        await finished(pilot)
    assert app.result is not None and app.result.outcome == "success"
    assert (
        tmp_path / "project" / "calc.py"
    ).read_text() == "def add(a, b):\n    return a + b # reviewed\n"


async def test_a_remembers_an_edited_pattern_for_the_run_so_the_next_ask_does_not_come(
    tmp_path: Path,
) -> None:
    app = build(
        tmp_path, write("a.txt", "1"), write("b.txt", "2"), {"text": "done"}, criterion=None
    )
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await modal(pilot)
        await pilot.press("a")
        pattern = screen.query_one("#remember-pattern", Input)
        assert pattern.has_focus and pattern.value == "a.txt"
        await pilot.press("ctrl+u", *"*.txt", "enter")
        await finished(pilot)
        assert app.bells == 1  # one ask only: the remembered rule allowed b.txt
    assert app.result is not None and app.result.remembered == ("write allow *.txt",)
    assert (tmp_path / "project" / "b.txt").read_text() == "2"


async def test_a_can_save_the_rule_to_a_policy_file(tmp_path: Path) -> None:
    app = build(tmp_path, write("a.txt", "1"), {"text": "done"}, criterion=None)
    saved = tmp_path / "remembered.toml"
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await modal(pilot)
        await pilot.press("a")
        await pilot.click("#scope-file")
        field = screen.query_one("#remember-file", Input)
        assert field.display and field.value == str(saved)
        assert "saved to" in str(screen.query_one("#remember-preview").render())
        await pilot.press("ctrl+s")
        await finished(pilot)
    assert (tmp_path / "project" / "a.txt").read_text() == "1"
    assert any(
        r.pattern == "a.txt" for layer in load_policy_file(saved).layers for r in layer.rules
    )


async def test_n_denies_with_a_reason_the_model_reads(tmp_path: Path) -> None:
    provider = scripted({"tool_calls": [FIX_CALC], "usage": USAGE}, {"text": "understood"})
    app = build(tmp_path, provider=provider, max_steps=2)
    async with app.run_test(size=(100, 30)) as pilot:
        await modal(pilot)
        await pilot.press("n", *"use multiplication instead", "enter")
        await finished(pilot)
    assert (tmp_path / "project" / "calc.py").read_text() == ORIGINAL
    told = "\n".join(m.content for m in provider.requests[1].messages)
    assert "[write denied] calc.py — use multiplication instead" in told
    async with Store.open(tmp_path / "store.db") as store:
        (row,) = await store.approvals()
    assert row.status == "deny" and row.reason == "use multiplication instead"


async def test_d_defers_and_the_run_pauses_awaiting_approval(tmp_path: Path) -> None:
    app = build(tmp_path, {"tool_calls": [FIX_CALC], "usage": USAGE})
    async with app.run_test(size=(100, 30)) as pilot:
        await modal(pilot)
        await pilot.press("d")
        await finished(pilot)
        (call,) = run_screen(app).query(ToolCall)
        assert call.status == "deferred"
    assert (
        app.result is not None
        and app.result.outcome == "awaiting_approval"
        and app.exit_status == 4
    )
    async with Store.open(tmp_path / "store.db") as store:
        (pending,) = await store.approvals(pending_only=True)
    assert pending.target == "calc.py"
    assert (tmp_path / "project" / "calc.py").read_text() == ORIGINAL


async def test_waiting_on_you_outranks_every_status_and_rings_the_bell(tmp_path: Path) -> None:
    app = build(tmp_path, {"tool_calls": [FIX_CALC], "usage": USAGE})
    async with app.run_test(size=(100, 30)) as pilot:
        await modal(pilot)
        status = run_screen(app).status
        status.activity = "verifying"
        assert status.status == "⏸ waiting on you: write calc.py"
        assert status.has_class("-waiting")
        assert app.bells == 1 and app.terminal_title == "ioh-tui — waiting on you: write calc.py"
        await pilot.press("y")
        await until(pilot, lambda: not status.waiting)
        assert "waiting" not in app.terminal_title
        await finished(pilot)


async def test_an_answer_from_elsewhere_closes_the_modal(tmp_path: Path) -> None:
    app = build(tmp_path, {"tool_calls": [FIX_CALC], "usage": USAGE})
    async with app.run_test(size=(100, 30)) as pilot:
        await modal(pilot)
        async with Store.open(tmp_path / "store.db") as other:
            (pending,) = await other.approvals(pending_only=True)
            assert await other.resolve_approval(pending.id, status="approve", by="another terminal")
        await until(pilot, lambda: not isinstance(app.screen, ApprovalModal))
        await finished(pilot)
        assert not run_screen(app).status.waiting
    assert app.result is not None and app.result.outcome == "success"


async def test_esc_in_a_form_goes_back_to_the_choices(tmp_path: Path) -> None:
    app = build(tmp_path, {"tool_calls": [FIX_CALC], "usage": USAGE})
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await modal(pilot)
        await pilot.press("n")
        assert screen.mode == "deny"
        await pilot.press("escape")
        assert (screen.mode, app.screen is screen, app.running) == ("choices", True, True)
        await pilot.press("y")
        await finished(pilot)

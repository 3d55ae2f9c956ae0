"""MCP in the app: the decision modal for a server's tool, the call's block, the start screen."""

from __future__ import annotations

import json
from pathlib import Path

from textual.widgets import DataTable, Static, TextArea

from ioh_tui.engine import NewRun, TaskContract
from ioh_tui.mcp import ServerRow, ServerSpec, list_servers
from ioh_tui.sandbox import select
from ioh_tui.store import Store
from ioh_tui.tui.app_run import AppRun
from ioh_tui.tui.factory import make_app
from ioh_tui.tui.screens.start import StartScreen
from ioh_tui.tui.widgets.diff_view import DiffView
from tests.integration.mcp.servers import gone, marker, stdio_spec
from tests.tui.harness import calc_project, finished, modal, scripted, until


async def test_an_mcp_ask_shows_json_and_hints_and_a_rewrite_edits_the_arguments(
    tmp_path: Path,
) -> None:
    tag = marker()
    project = calc_project(tmp_path / "project")
    run = AppRun(
        NewRun(TaskContract.workspace("use the server", project)),
        scripted(
            {"tool_calls": [{"name": "mcp__fx__echo", "arguments": {"text": "asked"}}]},
            {"text": "done"},
        ),
        None,  # the default policy: mcp asks
        select("floor"),
        label="scripted test model",
        mcp=(stdio_spec(tag=tag),),
    )
    app = make_app(tmp_path / "store.db", run, remember_file=tmp_path / "remembered.toml")
    app.animation_level = "none"
    async with app.run_test(size=(110, 36)) as pilot:
        asked = await modal(pilot)
        assert str(asked.query_one("#ask-title", Static).render()) == "mcp  fx/echo"
        body = asked.query_one(DiffView)
        assert body.kind == "command"
        assert json.loads(asked.request.content or "") == {"text": "asked"}
        assert asked.request.preview is not None
        assert "read-only, not destructive" in asked.request.preview
        await pilot.press("e")
        area = asked.query_one("#rewrite-text", TextArea)
        assert json.loads(area.text) == {"text": "asked"}
        area.load_text('{"text": "edited in the modal"}')
        await pilot.press("ctrl+s")
        await finished(pilot)
    async with Store.open(tmp_path / "store.db") as store:
        (call,) = await store.tool_calls(1)
    assert call.name == "mcp__fx__echo"
    assert call.output.startswith("echo: edited in the modal")
    assert gone(tag)


async def test_the_start_screen_lists_servers_with_state_and_tool_counts(tmp_path: Path) -> None:
    tag = marker()
    specs = (stdio_spec(tag=tag), ServerSpec("broken", command="/nonexistent/server"))

    async def lister() -> list[ServerRow]:
        return await list_servers(specs, select("floor"), tmp_path, lambda spec: False)

    app = make_app(tmp_path / "absent.db", mcp=lister)
    app.animation_level = "none"
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        assert isinstance(screen, StartScreen)
        await until(pilot, lambda: len(screen.server_rows) == 2, within=30)
        await pilot.pause()
        table = screen.query_one("#start-mcp", DataTable)
        rows = {str(table.get_row_at(i)[0]): table.get_row_at(i) for i in range(2)}
        assert [str(c) for c in rows["fx"][1:4]] == ["stdio", "ready", "10"]
        assert str(rows["broken"][2]).startswith("failed: /nonexistent/server: command not")
    assert gone(tag)


async def test_a_resource_read_is_asked_by_its_uri_and_a_rewrite_points_it_elsewhere(
    tmp_path: Path,
) -> None:
    tag = marker()
    project = calc_project(tmp_path / "project")
    read = {"name": "mcp_read_resource", "arguments": {"server": "fx", "uri": "memo://note"}}
    run = AppRun(
        NewRun(TaskContract.workspace("read a note", project)),
        scripted({"tool_calls": [read]}, {"text": "done"}),
        None,  # the default policy: mcp asks
        select("floor"),
        label="scripted test model",
        mcp=(stdio_spec(tag=tag, resources=True),),
    )
    app = make_app(tmp_path / "store.db", run, remember_file=tmp_path / "remembered.toml")
    app.animation_level = "none"
    async with app.run_test(size=(110, 36)) as pilot:
        asked = await modal(pilot)
        assert str(asked.query_one("#ask-title", Static).render()) == "mcp  fx/memo://note"
        assert asked.request.preview == "resource note: A short note."
        assert asked.query_one(DiffView).body == "resource note: A short note."
        await pilot.press("e")  # no content to edit: the rewrite edits the target
        area = asked.query_one("#rewrite-text", TextArea)
        assert area.text == "fx/memo://note"
        area.load_text("fx/memo://notes/from-the-modal")
        await pilot.press("ctrl+s")
        await finished(pilot)
    async with Store.open(tmp_path / "store.db") as store:
        (call,) = await store.tool_calls(1)
    assert call.output.startswith(
        "[resource memo://notes/from-the-modal]\nthe note called from-the-modal"
    )
    assert gone(tag)

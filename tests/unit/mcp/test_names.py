"""What the model sees of an MCP tool: its name and, for the person asked, the server's hints."""

from __future__ import annotations

from ioh_tui.mcp.spec import ServerSpec, tool_name
from ioh_tui.mcp.tools import hints_line


def test_a_tool_name_is_prefixed_and_made_acceptable_to_providers() -> None:
    assert tool_name("github", "create_issue") == "mcp__github__create_issue"
    assert tool_name("fs", "read.file/v2") == "mcp__fs__read_file_v2"
    assert tool_name("fs", "x" * 60) is None  # past 64 characters no provider takes it


def test_hints_are_worded_as_the_servers_claims_and_absent_when_there_are_none() -> None:
    line = hints_line({"readOnlyHint": True, "destructiveHint": False, "openWorldHint": True})
    assert line == (
        "server's hints (not checked; the policy decides): read-only, not destructive, "
        "reaches outside"
    )
    assert hints_line({"title": "Echo"}) is None


def test_a_server_is_shown_by_its_command_line_or_url_never_its_headers() -> None:
    local = ServerSpec("fs", command="npx", args=("-y", "server fs"))
    remote = ServerSpec("gh", url="https://mcp.example.test", headers_env={"Authorization": "GH"})
    assert (local.kind, local.line) == ("stdio", "npx -y 'server fs'")
    assert (remote.kind, remote.line) == ("http", "https://mcp.example.test")
    older = ServerSpec("old", url="https://mcp.example.test/sse", transport="sse")
    assert (older.kind, older.line) == ("sse", "https://mcp.example.test/sse")

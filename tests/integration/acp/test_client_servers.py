"""The client's HTTP and SSE MCP servers (`mcpServers`, types http and sse) serve the runs.

The servers are the fixture built with the official `mcp` SDK, on streamable HTTP and on
HTTP+SSE at 127.0.0.1; `ioh-tui acp` is a subprocess driven by the SDK's client side.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any, cast

import pytest
from acp import spawn_agent_process, text_block
from acp.interfaces import Client
from acp.schema import HttpHeader, HttpMcpServer, SseMcpServer, ToolCallProgress

from ioh_tui.acp.session import AnyMcpServer
from tests.integration.acp.test_acp import Recorder, agent_env, always, asks
from tests.integration.mcp.servers import http_server

pytestmark = [pytest.mark.asyncio, pytest.mark.slow]

TOKEN = "Bearer s3cret-token"

SCENARIO = {
    "model": "m",
    "turns": [
        {
            "tool_calls": [
                {"name": "mcp__fx__header", "arguments": {"name": "Authorization"}},
                {"name": "mcp__fx__echo", "arguments": {"text": "over http"}},
                {"name": "mcp__old__echo", "arguments": {"text": "over sse"}},
            ]
        },
        {"text": "Done."},
    ],
}


def outputs(seen: list[Any]) -> str:
    """The text of every finished tool call's content."""
    return "\n".join(
        str(part.content.text)
        for u in seen
        if isinstance(u, ToolCallProgress) and u.status == "completed"
        for part in u.content or ()
    )


async def test_the_clients_http_and_sse_servers_serve_the_run_with_their_headers(
    tmp_path: Path,
) -> None:
    (tmp_path / "w").mkdir()
    scenario = tmp_path / "scenario.json"
    scenario.write_text(json.dumps(SCENARIO))
    env = agent_env(tmp_path / "home", tmp_path / "config")
    client = Recorder()
    args = ("--scenario", str(scenario), "--sandbox", "floor", "--store", str(tmp_path / "s.db"))
    with http_server() as url, http_server("sse") as sse_url:
        async with spawn_agent_process(
            cast(Client, client), sys.executable, "-m", "ioh_tui", "acp", *args, env=env
        ) as (conn, _process):
            init = await conn.initialize(protocol_version=1)
            assert init.agent_capabilities is not None
            capabilities = init.agent_capabilities.mcp_capabilities
            assert capabilities is not None and (capabilities.http, capabilities.sse) == (
                True,
                True,
            )
            servers: list[AnyMcpServer] = [
                HttpMcpServer(
                    type="http",
                    name="fx",
                    url=url,
                    headers=[HttpHeader(name="Authorization", value=TOKEN)],
                ),
                SseMcpServer(type="sse", name="old", url=sse_url, headers=[]),
            ]
            session = await conn.new_session(cwd=str(tmp_path / "w"), mcp_servers=servers)
            client.answers[session.session_id] = always("approve")
            done = await asyncio.wait_for(
                conn.prompt(session_id=session.session_id, prompt=[text_block("ask fx")]),
                timeout=90,
            )
    seen = client.seen[session.session_id]
    assert done.stop_reason == "end_turn"
    said = outputs(seen)
    # The header reached the server (the tool says only its length); the other tool answered.
    assert f"Authorization: {len(TOKEN)} characters" in said
    assert "echo: over http" in said and "echo: over sse" in said
    assert len(asks(seen)) == 3  # MCP calls are asked like any configured server's
    assert TOKEN not in (tmp_path / "s.db").read_bytes().decode("latin-1")

"""`ioh-tui acp` driven as a subprocess by the official SDK's client side, over real stdio.

One agent process serves the whole module (its start is most of the cost); each test opens its
own session in its own workspace. The model is the scripted provider: a session's first prompt
plays three turns — write `out.txt`, write it again (the identical ask), then say it is done; its
second prompt carries the conversation on, so its run plays the two turns after them (write
`out.txt` once more, done).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import pytest
import pytest_asyncio
from acp import RequestError, spawn_agent_process, text_block
from acp.client.connection import ClientSideConnection
from acp.interfaces import Client
from acp.schema import (
    AgentMessageChunk,
    AgentThoughtChunk,
    AllowedOutcome,
    DeniedOutcome,
    FileEditToolCallContent,
    PermissionOption,
    PromptResponse,
    RequestPermissionResponse,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
    UsageUpdate,
    UserMessageChunk,
)

from ioh_tui.store import Store

# The agent process's start (importing the SDK's schema under load) is most of the ~5 s.
pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.slow]

SCENARIO = {
    "model": "m",
    "turns": [
        {
            "thinking": "a file is wanted",
            "text": "Writing out.txt.",
            "tool_calls": [
                {"name": "write_file", "arguments": {"path": "out.txt", "content": "hello\n"}}
            ],
        },
        {
            "text": "Once more.",
            "tool_calls": [
                {"name": "write_file", "arguments": {"path": "out.txt", "content": "hello\n"}}
            ],
        },
        {"text": "Done."},
        # A session's next prompt carries the conversation on, so its run is served from here.
        {
            "text": "Again.",
            "tool_calls": [
                {"name": "write_file", "arguments": {"path": "out.txt", "content": "hello\n"}}
            ],
        },
        {"text": "Done again."},
    ],
}

Answer = Callable[[ToolCallUpdate, list[PermissionOption]], Awaitable[RequestPermissionResponse]]


def chose(option_id: str, meta: dict[str, Any] | None = None) -> RequestPermissionResponse:
    return RequestPermissionResponse(
        outcome=AllowedOutcome(option_id=option_id, outcome="selected", field_meta=meta)
    )


def always(option_id: str, meta: dict[str, Any] | None = None) -> Answer:
    """An answer choosing `option_id` at every question."""

    async def answer(call: ToolCallUpdate, options: list[PermissionOption]) -> Any:
        return chose(option_id, meta)

    return answer


@dataclass
class Recorder:
    """The client: records every update and question in arrival order; answers by session."""

    seen: dict[str, list[Any]] = field(default_factory=dict)
    answers: dict[str, Answer] = field(default_factory=dict)

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.seen.setdefault(session_id, []).append(update)

    async def request_permission(
        self,
        session_id: str,
        tool_call: ToolCallUpdate,
        options: list[PermissionOption],
        **kwargs: Any,
    ) -> RequestPermissionResponse:
        self.seen.setdefault(session_id, []).append(("ask", tool_call, options))
        return await self.answers[session_id](tool_call, options)

    def on_connect(self, conn: Any) -> None:
        pass


@dataclass
class Agent:
    conn: ClientSideConnection
    client: Recorder
    store: Path
    base: Path

    async def session(self, name: str, answer: Answer) -> tuple[str, Path]:
        workspace = self.base / name
        workspace.mkdir()
        new = await self.conn.new_session(cwd=str(workspace), mcp_servers=[])
        self.client.answers[new.session_id] = answer
        return new.session_id, workspace

    async def prompt(self, session_id: str, text: str = "write out.txt") -> PromptResponse:
        return await asyncio.wait_for(
            self.conn.prompt(session_id=session_id, prompt=[text_block(text)]), timeout=30
        )

    async def prompted(
        self, name: str, answer: Answer, text: str = "write out.txt"
    ) -> tuple[list[Any], Path, PromptResponse]:
        """A new session answering every question with `answer`, and one prompt in it."""
        session, workspace = await self.session(name, answer)
        done = await self.prompt(session, text)
        return self.client.seen[session], workspace, done

    async def outcome(self, run_id: int) -> str | None:
        async with Store.open(self.store, create=False) as store:
            return (await store.run(run_id)).outcome


def agent_env(home: Path, config: Path) -> dict[str, str]:
    """The agent process's environment: no keys, no ioh-tui settings, its own home and config."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not (k.startswith("IOH_TUI_") or k.endswith("_API_KEY"))
    }
    env["IOH_TUI_HOME"] = str(home)
    env["XDG_CONFIG_HOME"] = str(config)
    return env


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def agent(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Agent]:
    base = tmp_path_factory.mktemp("acp")
    scenario = base / "scenario.json"
    scenario.write_text(json.dumps(SCENARIO))
    store = tmp_path_factory.mktemp("acp-store") / "store.db"
    env = agent_env(tmp_path_factory.mktemp("acp-home"), tmp_path_factory.mktemp("acp-config"))
    client = Recorder()
    args = ("--scenario", str(scenario), "--sandbox", "floor", "--store", str(store))
    async with spawn_agent_process(
        cast(Client, client), sys.executable, "-m", "ioh_tui", "acp", *args, env=env
    ) as (conn, _process):
        init = await conn.initialize(protocol_version=1)
        assert init.protocol_version == 1
        assert init.agent_capabilities is not None
        assert init.agent_capabilities.load_session is True
        assert init.auth_methods == []
        yield Agent(conn, client, store, base)


def updates_of(seen: list[Any], kind: type) -> list[Any]:
    return [u for u in seen if isinstance(u, kind)]


def said(seen: list[Any], kind: type = AgentMessageChunk) -> str:
    return "".join(u.content.text for u in updates_of(seen, kind))


def asks(seen: list[Any]) -> list[tuple[ToolCallUpdate, list[PermissionOption]]]:
    return [(u[1], u[2]) for u in seen if isinstance(u, tuple)]


async def test_allow_once_streams_the_run_and_writes_the_file(agent: Agent) -> None:
    seen, workspace, done = await agent.prompted("once", always("approve"))

    assert done.stop_reason == "end_turn"
    assert (workspace / "out.txt").read_text() == "hello\n"
    assert "Writing out.txt." in said(seen) and "Done." in said(seen)
    assert "a file is wanted" in said(seen, AgentThoughtChunk)
    usage = updates_of(seen, UsageUpdate)
    assert usage and all(0 < u.used <= u.size for u in usage)
    # The tool call goes out (pending, with its diff) before the question about it.
    first = updates_of(seen, ToolCallStart)[0]
    assert (first.kind, first.status, first.title) == ("edit", "pending", "write_file out.txt")
    (diff,) = first.content
    assert isinstance(diff, FileEditToolCallContent)
    assert (diff.path, diff.old_text, diff.new_text) == (
        str(workspace / "out.txt"),
        None,
        "hello\n",
    )
    assert seen.index(first) < next(i for i, u in enumerate(seen) if isinstance(u, tuple))
    # Both writes asked; each question names the call and offers our five answers.
    (call, options), _ = asks(seen)
    assert call.tool_call_id == first.tool_call_id
    assert call.title == "write out.txt — asked by the default tier"
    assert call.field_meta is not None and call.field_meta["ioh-tui"]["act"] == "write"
    assert [(o.option_id, o.kind) for o in options] == [
        ("approve", "allow_once"),
        ("remember", "allow_always"),
        ("deny", "reject_once"),
        ("defer", "reject_once"),
        ("rewrite", "allow_once"),
    ]
    statuses = [u.status for u in updates_of(seen, ToolCallProgress)]
    assert statuses.count("completed") == 2 and "failed" not in statuses
    assert done.usage is not None and done.usage.total_tokens > 0
    assert done.field_meta is not None
    run_id = done.field_meta["ioh-tui"]["runId"]
    assert await agent.outcome(run_id) == "finished"


async def test_reject_once_refuses_the_write(agent: Agent) -> None:
    seen, workspace, done = await agent.prompted("reject", always("deny"))

    assert done.stop_reason == "end_turn"
    assert not (workspace / "out.txt").exists()
    assert len(asks(seen)) == 2
    ended = [u for u in updates_of(seen, ToolCallProgress) if u.status is not None]
    assert [u.status for u in ended] == ["failed", "failed"]
    assert "denied by the operator" in ended[0].content[-1].content.text


async def test_allow_always_stops_the_next_identical_ask(agent: Agent) -> None:
    seen, workspace, done = await agent.prompted("always", always("remember"))

    assert done.stop_reason == "end_turn"
    assert len(asks(seen)) == 1  # the second, identical write went by the remembered rule
    assert len(updates_of(seen, ToolCallStart)) == 2
    assert (workspace / "out.txt").read_text() == "hello\n"


async def test_what_was_remembered_holds_for_the_sessions_next_prompt(agent: Agent) -> None:
    session, workspace = await agent.session("session-rule", always("remember"))
    await agent.prompt(session)
    (workspace / "out.txt").unlink()
    before = len(asks(agent.client.seen[session]))
    done = await agent.prompt(session)

    assert before == 1
    assert len(asks(agent.client.seen[session])) == 1  # the second run asked nothing
    assert (workspace / "out.txt").read_text() == "hello\n"
    assert done.stop_reason == "end_turn"


async def test_rewrite_applies_the_edited_content(agent: Agent) -> None:
    _, workspace, _ = await agent.prompted(
        "rewrite", always("rewrite", {"ioh-tui.rewrite": "edited\n"})
    )
    assert (workspace / "out.txt").read_text() == "edited\n"


async def test_defer_pauses_the_run_and_the_next_prompt_asks_again(agent: Agent) -> None:
    session, workspace = await agent.session("defer", always("defer"))
    done = await agent.prompt(session)
    assert done.stop_reason == "end_turn"
    assert done.field_meta is not None
    run_id = done.field_meta["ioh-tui"]["runId"]
    assert done.field_meta["ioh-tui"]["outcome"] == "awaiting_approval"
    assert "ioh-tui resume" in said(agent.client.seen[session])
    assert not (workspace / "out.txt").exists()

    # The next prompt continues the paused run: the deferred write is asked again, then the rest.
    agent.client.answers[session] = always("approve")
    done = await agent.prompt(session, "go on")
    assert done.field_meta is not None
    assert (done.field_meta["ioh-tui"]["runId"], done.field_meta["ioh-tui"]["outcome"]) == (
        run_id,
        "finished",
    )
    assert len(asks(agent.client.seen[session])) == 3  # deferred once, then both approved
    assert (workspace / "out.txt").read_text() == "hello\n"


async def test_cancel_ends_the_run_cancelled(agent: Agent) -> None:
    session = ""

    async def cancel(call: ToolCallUpdate, options: list[PermissionOption]) -> Any:
        await agent.conn.cancel(session_id=session)
        return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))

    session, workspace = await agent.session("cancel", cancel)
    done = await agent.prompt(session)

    assert done.stop_reason == "cancelled"
    assert not (workspace / "out.txt").exists()
    assert done.field_meta is not None
    assert await agent.outcome(done.field_meta["ioh-tui"]["runId"]) == "cancelled"


async def test_load_replays_a_stored_run(agent: Agent) -> None:
    _, workspace, done = await agent.prompted("load", always("approve"), "write out.txt, then stop")
    assert done.field_meta is not None
    run_id = done.field_meta["ioh-tui"]["runId"]

    loaded = f"run-{run_id}"
    await agent.conn.load_session(cwd=str(workspace), session_id=loaded, mcp_servers=[])
    seen = agent.client.seen[loaded]
    assert isinstance(seen[0], UserMessageChunk)
    assert seen[0].content.text == "write out.txt, then stop"
    assert "Writing out.txt." in said(seen) and f"run {run_id} finished" in said(seen)
    calls = updates_of(seen, ToolCallStart)
    assert [(c.kind, c.status) for c in calls] == [("edit", "completed")] * 2

    with pytest.raises(RequestError):
        await agent.conn.load_session(cwd=str(workspace), session_id="run-999999", mcp_servers=[])

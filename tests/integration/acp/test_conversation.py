"""An ACP session is one conversation: each prompt's run carries on the runs before it.

`ioh-tui acp` runs as a subprocess driven by the SDK's client side; the model is the fake server
on 127.0.0.1 speaking the OpenAI wire, which records every request it gets, so the test reads what
the model was sent for the second and third prompts.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, cast

import pytest
from acp import RequestError, spawn_agent_process, text_block
from acp.client.connection import ClientSideConnection
from acp.interfaces import Client
from acp.schema import (
    PromptResponse,
    SessionConfigOptionSelect,
    SessionConfigSelectOption,
    UserMessageChunk,
)

from ioh_tui.providers.testing.fake_server import FakeModelServer
from ioh_tui.store import Store
from tests.fakes.provider_server import scenario, serving
from tests.integration.acp.test_acp import Recorder, agent_env, always, said

pytestmark = [pytest.mark.asyncio, pytest.mark.slow]

TURNS = (
    {
        "text": "Reading the notes.",
        "tool_calls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}],
    },
    {"text": "The notes say plum."},
    {"text": "Still plum."},
    {"text": "Plum, a third time."},
)


def sent(body: Any) -> list[dict[str, Any]]:
    """The messages of one recorded chat-completions request."""
    return cast(list[dict[str, Any]], body["messages"])


def run_of(done: PromptResponse) -> int:
    assert done.field_meta is not None
    return int(done.field_meta["ioh-tui"]["runId"])


@contextlib.asynccontextmanager
async def notes_agent(
    tmp_path: Path,
) -> AsyncIterator[tuple[ClientSideConnection, Recorder, FakeModelServer, Path, Path]]:
    """`ioh-tui acp` on a workspace holding notes.txt: its connection, the client, the model, the
    workspace and the store."""
    workspace = tmp_path / "w"
    workspace.mkdir()
    (workspace / "notes.txt").write_text("the word is plum\n")
    store = tmp_path / "store.db"
    env = agent_env(tmp_path / "home", tmp_path / "config")
    client = Recorder()
    async with serving(scenario(*TURNS)) as model:
        args = (
            *("--provider", "compatible", "--base-url", model.base_url, "--model", "fake-model"),
            *("--sandbox", "floor", "--store", str(store)),
        )
        async with spawn_agent_process(
            cast(Client, client), sys.executable, "-m", "ioh_tui", "acp", *args, env=env
        ) as (conn, _process):
            yield conn, client, model, workspace, store


async def test_later_prompts_carry_the_conversation_and_a_loaded_session_goes_on(
    tmp_path: Path,
) -> None:
    async with notes_agent(tmp_path) as (conn, client, model, workspace, store):
        await conn.initialize(protocol_version=1)
        session = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        client.answers[session] = always("deny")

        async def prompt(session_id: str, text: str) -> PromptResponse:
            return await asyncio.wait_for(
                conn.prompt(session_id=session_id, prompt=[text_block(text)]), timeout=30
            )

        first = run_of(await prompt(session, "what do the notes say?"))
        second = run_of(await prompt(session, "and now?"))

        # The second prompt's request holds the first turn whole: the prompt, the model's
        # call, the tool's result and the answer, then the new prompt last.
        chat = sent(model.requests[2].body)
        contents = [str(m.get("content") or "") for m in chat]
        at = contents.index("what do the notes say?")
        assert chat[at]["role"] == "user"
        assert chat[at + 1]["role"] == "assistant"
        assert chat[at + 1]["content"] == "Reading the notes."
        assert chat[at + 1]["tool_calls"][0]["function"]["name"] == "read_file"
        assert chat[at + 2]["role"] == "tool" and "the word is plum" in contents[at + 2]
        assert (chat[at + 3]["role"], contents[at + 3]) == ("assistant", "The notes say plum.")
        assert (chat[-1]["role"], contents[-1]) == ("user", "and now?")
        # The first request had no earlier conversation.
        assert "and now?" not in str(model.requests[0].body)

        # A new session loaded from the second run replays both prompts and carries both on.
        loaded = f"run-{second}"
        await conn.load_session(cwd=str(workspace), session_id=loaded, mcp_servers=[])
        users = [u.content.text for u in client.seen[loaded] if isinstance(u, UserMessageChunk)]
        assert users == ["what do the notes say?", "and now?"]
        assert "Still plum." in said(client.seen[loaded])
        client.answers[loaded] = always("deny")
        third = run_of(await prompt(loaded, "once more?"))

    text = str(model.requests[3].body)
    assert "the word is plum" in text and "Still plum." in text
    assert sent(model.requests[3].body)[-1]["content"] == "once more?"
    # The store keeps each run's own turns; the later runs name the runs they carry on.
    async with Store.open(store, create=False) as opened:
        assert (await opened.run(second)).contract["continues"] == [first]
        assert (await opened.run(third)).contract["continues"] == [first, second]
        assert [m.content for m in await opened.messages(second)] == ["Still plum."]


async def test_stored_conversations_are_listed_resumed_without_replay_and_closed(
    tmp_path: Path,
) -> None:
    from ioh_tui.acp.listing import listed_sessions

    async with notes_agent(tmp_path) as (conn, client, model, workspace, store):
        ready = await conn.initialize(protocol_version=1)
        assert ready.agent_capabilities is not None
        offered = ready.agent_capabilities.session_capabilities
        assert offered is not None and offered.list is not None and offered.resume is not None

        async def prompt(session_id: str, text: str) -> PromptResponse:
            client.answers[session_id] = always("deny")
            return await asyncio.wait_for(
                conn.prompt(session_id=session_id, prompt=[text_block(text)]), timeout=30
            )

        session = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        first = run_of(await prompt(session, "what do the notes say?"))
        second = run_of(await prompt(session, "and now?"))
        # One conversation, listed once by its last run and titled by its first prompt.
        (listed,) = (await conn.list_sessions(cwd=str(workspace))).sessions
        assert (listed.session_id, listed.title) == (f"run-{second}", "what do the notes say?")
        assert listed.cwd == str(workspace.resolve()) and listed.updated_at
        assert listed.field_meta == {
            "ioh-tui": {"runId": second, "runs": [first, second], "state": "finished"}
        }
        assert (await conn.list_sessions(cwd=str(tmp_path))).sessions == []

        # Resumed in a new connection's way: no replay, and the next prompt carries it on.
        await conn.resume_session(cwd=str(workspace), session_id=listed.session_id)
        assert listed.session_id not in client.seen
        third = run_of(await prompt(listed.session_id, "once more?"))
        assert "Still plum." in str(model.requests[-1].body)
        await conn.close_session(session_id=listed.session_id)
        with pytest.raises(RequestError):
            await prompt(listed.session_id, "after closing?")

        other = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        fourth = run_of(await prompt(other, "a new thread"))
        heads = [s.session_id for s in (await conn.list_sessions()).sessions]
        assert heads == [f"run-{fourth}", f"run-{third}"]

    async with Store.open(store, create=False) as opened:
        assert (await opened.run(third)).contract["continues"] == [first, second]
        # A page at a time, newest first: the cursor is the last run listed.
        page = await listed_sessions(opened, str(workspace), page=1)
        assert [s.session_id for s in page.sessions] == [f"run-{fourth}"]
        assert page.next_cursor == str(fourth)
        rest = await listed_sessions(opened, str(workspace), page.next_cursor, page=1)
        assert [s.session_id for s in rest.sessions] == [f"run-{third}"]
        assert rest.next_cursor is None


async def test_the_reasoning_effort_is_a_session_option_the_next_run_uses(tmp_path: Path) -> None:
    async with notes_agent(tmp_path) as (conn, client, model, workspace, _store):
        await conn.initialize(protocol_version=1)
        opened = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        (option,) = opened.config_options or []
        assert isinstance(option, SessionConfigOptionSelect)
        assert (option.id, option.current_value) == ("reasoning_effort", "default")
        assert option.category == "thought_level"
        values = [o.value for o in option.options if isinstance(o, SessionConfigSelectOption)]
        assert values == ["default", "low", "medium", "high"]
        session = opened.session_id
        client.answers[session] = always("deny")
        chosen = await conn.set_config_option(
            config_id="reasoning_effort", session_id=session, value="high"
        )
        assert chosen.config_options[0].current_value == "high"
        # Opened again in this process, the session keeps what its client chose.
        again = await conn.resume_session(cwd=str(workspace), session_id=session)
        assert (again.config_options or [])[0].current_value == "high"
        await asyncio.wait_for(
            conn.prompt(session_id=session, prompt=[text_block("what do the notes say?")]), 30
        )
        assert all(r.body["reasoning_effort"] == "high" for r in model.requests)
        await conn.set_config_option(
            config_id="reasoning_effort", session_id=session, value="default"
        )
        seen = len(model.requests)
        await asyncio.wait_for(conn.prompt(session_id=session, prompt=[text_block("and?")]), 30)
        assert "reasoning_effort" not in model.requests[seen].body
        with pytest.raises(RequestError):
            await conn.set_config_option(
                config_id="reasoning_effort", session_id=session, value="extreme"
            )

"""MCP servers through the real loop: a real SDK server, the real sandbox, the policy."""

from __future__ import annotations

import contextlib
import json
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

import pytest

from ioh_tui.core import events as ev
from ioh_tui.core.acts import Act, Effect
from ioh_tui.core.events import Event
from ioh_tui.engine import NewRun, Parts, Resume, RunResult, TaskContract, start
from ioh_tui.mcp import ServerSpec
from ioh_tui.policy import ApproveAll, Decision, DenyAll, Policy, Rule
from ioh_tui.providers import ScriptedProvider
from ioh_tui.sandbox import probe, select
from ioh_tui.store import Store
from ioh_tui.store.rows import ToolCallRow
from tests.integration.engine.helpers import scripted
from tests.integration.engine.test_approvals import Scripted
from tests.integration.mcp.servers import gone, http_server, marker, stdio_spec


def call(tool: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": tool, "arguments": arguments}]}


async def drive(
    project: Path,
    provider: ScriptedProvider,
    servers: tuple[ServerSpec, ...],
    *,
    policy: Policy | None = None,
    approver: Any = None,
    sandbox: str = "auto",
) -> tuple[RunResult, list[ToolCallRow]]:
    async with Store.memory() as store:
        parts = Parts(
            provider,
            store,
            policy=policy if policy is not None else Policy.default().allow_mcp("fx/*"),
            approver=approver or DenyAll(),
            sandbox=select(sandbox),
            mcp=servers,
        )
        result = await start(NewRun(TaskContract.workspace("use the tools", project)), parts)
        calls = await store.tool_calls(result.run_id)
    return result, calls


async def test_a_tool_is_offered_with_its_schema_called_and_its_result_read(project: Path) -> None:
    tag = marker()
    provider = scripted(call("mcp__fx__echo", text="hello"), {"text": "done"})
    result, calls = await drive(project, provider, (stdio_spec(tag=tag),))
    assert result.outcome == "finished"
    offered = {spec.name: spec for spec in provider.requests[0].tools}
    assert offered["mcp__fx__echo"].parameters["properties"]["text"]["type"] == "string"
    assert "read_file" in offered  # the built-in tools stay
    assert calls[0].name == "mcp__fx__echo" and calls[0].ok
    # The result reaches the next request.
    answer = [m for m in provider.requests[1].messages if m.role == "tool"]
    assert answer[-1].content == "echo: hello"
    assert gone(tag), "the server outlived its run"


async def test_a_local_server_runs_in_the_workspace_with_its_env(project: Path) -> None:
    root = str(project.resolve())  # noqa: ASYNC240 (a test's own path)
    provider = scripted(call("mcp__fx__where"), {"text": "done"})
    spec = stdio_spec(tag=marker(), env={"FIXTURE_VAR": "set-by-config"})
    _, calls = await drive(project, provider, (spec,))
    assert f"cwd={root}" in calls[0].output
    assert "FIXTURE_VAR=set-by-config" in calls[0].output


async def test_a_deny_rule_refuses_naming_server_and_tool(project: Path) -> None:
    provider = scripted(call("mcp__fx__echo", text="x"), {"text": "done"})
    policy = Policy.default().allow_mcp("fx/*").layer("team").deny_mcp("fx/echo")
    approver = Scripted(Decision.approve())
    _, calls = await drive(
        project, provider, (stdio_spec(tag=marker()),), policy=policy, approver=approver
    )
    assert calls[0].refused
    assert calls[0].output.startswith("[mcp refused] fx/echo (rule 'fx/echo' in layer 'team')")
    assert approver.seen == []


async def test_an_ask_shows_arguments_and_hints_and_a_rewrite_edits_the_json(
    project: Path,
) -> None:
    provider = scripted(call("mcp__fx__echo", text="original"), {"text": "done"})
    approver = Scripted(Decision.rewrite(content=json.dumps({"text": "rewritten"})))
    _, calls = await drive(
        project, provider, (stdio_spec(tag=marker()),), policy=Policy.default(), approver=approver
    )
    (asked,) = approver.seen
    assert (asked.act, asked.target, asked.tool) == (Act.MCP, "fx/echo", "mcp__fx__echo")
    assert json.loads(asked.content or "") == {"text": "original"}
    assert asked.preview is not None and "read-only, not destructive" in asked.preview
    assert calls[0].output.startswith("echo: rewritten")
    assert "rewrote this action" in calls[0].output


async def test_a_rewrite_that_is_not_a_json_object_is_refused(project: Path) -> None:
    provider = scripted(call("mcp__fx__echo", text="x"), {"text": "done"})
    approver = Scripted(Decision.rewrite(content="{not json"))
    _, calls = await drive(
        project, provider, (stdio_spec(tag=marker()),), policy=Policy.default(), approver=approver
    )
    assert calls[0].refused
    assert "the rewritten arguments are not a JSON object" in calls[0].output


async def test_a_rewrite_is_checked_against_the_tools_schema_before_the_call(
    project: Path,
) -> None:
    provider = scripted(call("mcp__fx__echo", text="x"), {"text": "done"})
    approver = Scripted(Decision.rewrite(content='{"text": 5}'))
    _, calls = await drive(
        project, provider, (stdio_spec(tag=marker()),), policy=Policy.default(), approver=approver
    )
    assert calls[0].refused
    assert calls[0].output == (
        "[mcp__fx__echo refused] fx/echo: the rewritten arguments do not fit the tool's schema: "
        "text: 5 is not of type 'string'"
    )


async def test_a_server_crashing_mid_call_is_an_error_and_the_run_goes_on(project: Path) -> None:
    tag = marker()
    provider = scripted(
        call("mcp__fx__crash"),
        call("mcp__fx__echo", text="still there?"),
        call("read_file", path="calc.py"),
        {"text": "done"},
    )
    result, calls = await drive(project, provider, (stdio_spec(tag=tag),))
    assert result.outcome == "finished"
    assert not calls[0].ok and "the server exited: exit status 3" in calls[0].output
    assert "crashing on purpose" in calls[0].output  # its last words on stderr
    assert not calls[1].ok and "server fx is not running" in calls[1].output
    assert calls[2].ok
    assert gone(tag)


async def test_the_tool_list_is_refreshed_when_the_server_says_it_changed(project: Path) -> None:
    provider = scripted(call("mcp__fx__grow"), call("mcp__fx__extra", n=21), {"text": "done"})
    _, calls = await drive(project, provider, (stdio_spec(tag=marker()),))
    assert "mcp__fx__extra" not in {s.name for s in provider.requests[0].tools}
    assert "mcp__fx__extra" in {s.name for s in provider.requests[1].tools}
    # The call that changed the list says so with its result (the model and the trace see it).
    assert calls[0].output == "grown\n[ioh-tui: MCP server fx changed its tools: added extra]"
    assert calls[1].ok and calls[1].output == "42"


async def test_images_and_resources_are_described_and_inlined(project: Path) -> None:
    provider = scripted(call("mcp__fx__picture"), {"text": "done"})
    _, calls = await drive(project, provider, (stdio_spec(tag=marker()),))
    assert calls[0].output == (
        "[image: image/png, 100 bytes] not shown: the model test-model is not known to accept "
        "images\n[resource memo://note]\na note"
    )
    assert not provider.requests[1].messages[-1].images


async def test_an_image_result_reaches_a_model_that_takes_images(project: Path) -> None:
    provider = scripted(call("mcp__fx__photo"), call("mcp__fx__picture"), {"text": "done"})
    provider.scenario = replace(provider.scenario, model="claude-sonnet-4")
    _, calls = await drive(project, provider, (stdio_spec(tag=marker()),))
    answer = provider.requests[1].messages[-1]
    (image,) = answer.images
    assert (image.name, image.media_type, image.width, image.height) == (
        "fx/photo image 1",
        "image/png",
        3,
        2,
    )
    assert image.data.startswith(b"\x89PNG\r\n\x1a\n")
    assert calls[0].output == (
        f"a grey photo\n[image: image/png, {len(image.data)} bytes] shown to you as "
        f"fx/photo image 1 (image/png, {len(image.data)} bytes, 3x2)"
    )
    # Bytes that are no image are described and not sent, whatever type they claim.
    assert not provider.requests[2].messages[-1].images
    assert "[image: image/png, 100 bytes] not shown: not a PNG, JPEG" in calls[1].output


class Died(BaseException):
    """The harness dying mid-step: no handler of the engine's records an outcome for it."""


async def test_an_image_result_replayed_from_the_journal_keeps_its_image(project: Path) -> None:
    # One step calls the photo tool, then echo; the harness dies as echo starts, so the step is
    # never committed. Resuming replays the photo call from its journal entry (the server is not
    # called again), and the model must be sent the image the first drive would have sent.
    echo = {"name": "mcp__fx__echo", "arguments": {"text": "after"}}
    turns = ({"tool_calls": [{"name": "mcp__fx__photo", "arguments": {}}, echo]}, {"text": "ok"})

    def die_at_the_echo(event: Event) -> None:
        if isinstance(event, ev.ToolCallStarted) and event.name == "mcp__fx__echo":
            raise Died

    async with Store.memory() as store:
        parts = Parts(
            scripted(*turns, model="claude-sonnet-4"),
            store,
            policy=Policy.default().allow_mcp("fx/*"),
            sandbox=select("auto"),
            mcp=(stdio_spec(tag=marker()),),
            observers=(die_at_the_echo,),
        )
        with pytest.raises(Died):
            await start(NewRun(TaskContract.workspace("use the tools", project)), parts)
        (died,) = await store.runs()
        provider = scripted(*turns, model="claude-sonnet-4")
        done = await start(
            Resume(died.id, None, {}), replace(parts, provider=provider, observers=())
        )
        calls = await store.tool_calls(died.id)
    assert done.outcome == "finished", done.detail
    (request,) = provider.requests  # step 1's turn was staged; step 2's is the first request
    shown = [m for m in request.messages if m.role == "tool" and m.images]
    assert [i.name for m in shown for i in m.images] == ["fx/photo image 1"]
    assert shown[0].images[0].data.startswith(b"\x89PNG\r\n\x1a\n")
    assert [(c.name, c.output) for c in calls][1] == ("mcp__fx__echo", "echo: after")


async def test_a_long_result_is_capped_like_every_observation(project: Path) -> None:
    provider = scripted(call("mcp__fx__echo", text="y" * 30_000), {"text": "done"})
    _, calls = await drive(project, provider, (stdio_spec(tag=marker()),))
    assert len(calls[0].output) < 13_000 and "characters elided" in calls[0].output


async def test_a_server_that_cannot_start_leaves_the_run_without_its_tools(project: Path) -> None:
    provider = scripted({"text": "done"})
    broken = ServerSpec("broken", command="/nonexistent/server")
    async with Store.memory() as store:
        parts = Parts(provider, store, sandbox=select("auto"), mcp=(broken,))
        result = await start(NewRun(TaskContract.workspace("x", project)), parts)
        events = await store.sandbox_events(result.run_id)
    assert result.outcome == "finished"
    assert not any(s.name.startswith("mcp__") for s in provider.requests[0].tools)
    failed = [e for e in events if e.kind == "mcp_failed"]
    assert failed and "/nonexistent/server: command not found" in failed[0].detail


async def test_a_remembered_server_rule_stops_asking_for_its_other_tools(project: Path) -> None:
    provider = scripted(
        call("mcp__fx__echo", text="first"), call("mcp__fx__where"), {"text": "done"}
    )
    approver = Scripted(Decision.remembering(Rule(Act.MCP, Effect.ALLOW, "fx/*")))
    _, calls = await drive(
        project, provider, (stdio_spec(tag=marker()),), policy=Policy.default(), approver=approver
    )
    assert [r.target for r in approver.seen] == ["fx/echo"]
    assert calls[0].ok and calls[1].ok and "pid=" in calls[1].output


@pytest.mark.skipif("bwrap" not in probe(), reason="needs bubblewrap")
async def test_a_local_server_gets_the_network_only_where_a_net_rule_allows_it(
    project: Path,
) -> None:
    spec = stdio_spec(tag=marker())
    with http_server() as url:
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        outputs = []
        for policy in (
            Policy.default().allow_mcp("fx/*"),
            Policy.default().allow_mcp("fx/*").allow_net(f"{spec.command} *"),
        ):
            provider = scripted(call("mcp__fx__connect", port=port), {"text": "done"})
            _, calls = await drive(project, provider, (spec,), policy=policy, sandbox="bwrap")
            outputs.append(calls[0].output)
    assert outputs[0].startswith("no connection")  # the host's loopback is not the sandbox's
    assert outputs[1] == "connected"


@pytest.mark.parametrize("rung", ["floor", "namespaces"])
async def test_every_rung_runs_a_server_and_ends_it(project: Path, rung: str) -> None:
    if rung not in probe():
        pytest.skip(f"needs {rung}")
    tag = marker()
    provider = scripted(call("mcp__fx__echo", text=rung), {"text": "done"})
    _, calls = await drive(project, provider, (stdio_spec(tag=tag),), sandbox=rung)
    assert calls[0].output == f"echo: {rung}"
    assert gone(tag)


@pytest.mark.parametrize("transport", ["http", "sse"])
async def test_an_http_server_gets_its_headers_from_the_environment(
    project: Path, monkeypatch: pytest.MonkeyPatch, transport: Literal["http", "sse"]
) -> None:
    monkeypatch.setenv("FIXTURE_TOKEN", "s3cret-value")
    provider = scripted(
        call("mcp__web__header", name="Authorization"), call("mcp__web__echo", text="over http")
    )
    with http_server(transport) as url:
        spec = ServerSpec(
            "web", url=url, headers_env={"Authorization": "FIXTURE_TOKEN"}, transport=transport
        )
        policy = Policy.default().allow_mcp("web/*")
        async with Store.memory() as store:
            parts = Parts(
                provider,
                store,
                policy=policy,
                approver=ApproveAll(),
                sandbox=select("floor"),
                mcp=(spec,),
            )
            result = await start(NewRun(TaskContract.workspace("x", project)), parts)
            calls = await store.tool_calls(result.run_id)
            events = await store.sandbox_events(result.run_id)
    assert calls[0].output == "Authorization: 12 characters"
    assert calls[1].output == "echo: over http"
    (ready,) = [e for e in events if e.kind == "mcp_ready"]
    assert ready.detail == f"web: 10 tools ({transport} {url})"


@pytest.mark.parametrize("transport", ["http", "sse"])
async def test_a_remote_call_is_bounded_by_its_deadline_not_by_a_read_timeout(
    project: Path, monkeypatch: pytest.MonkeyPatch, transport: Literal["http", "sse"]
) -> None:
    from ioh_tui.mcp import transport as transports

    # A tool may answer after minutes of silence: no read timeout may close the connection
    # under it (the SDK's default, 300 s, did). Shown with a read timeout shorter than a call:
    # the call is cut. Without one (the default), the same call answers.
    assert transports.READ_TIMEOUT_S is None
    outputs = []
    # 2 s lets the server start on a loaded machine; the call is silent for 5 s.
    for read_timeout in (2.0, None):
        monkeypatch.setattr(transports, "READ_TIMEOUT_S", read_timeout)
        provider = scripted(call("mcp__web__wait", seconds=5), {"text": "done"})
        with http_server(transport) as url:
            spec = ServerSpec("web", url=url, transport=transport)
            policy = Policy.default().allow_mcp("web/*")
            _, calls = await drive(project, provider, (spec,), policy=policy, sandbox="floor")
        outputs.append(calls[0].output)
    assert outputs[0].startswith("[mcp__web__wait error] web/wait: ")
    assert outputs[1] == "waited"


async def test_a_missing_header_variable_fails_that_server_naming_the_variable(
    project: Path,
) -> None:
    provider = scripted({"text": "done"})
    with http_server() as url:
        spec = ServerSpec("web", url=url, headers_env={"Authorization": "FIXTURE_UNSET"})
        async with Store.memory() as store:
            parts = Parts(provider, store, sandbox=select("floor"), mcp=(spec,))
            result = await start(NewRun(TaskContract.workspace("x", project)), parts)
            events = await store.sandbox_events(result.run_id)
    (failed,) = [e for e in events if e.kind == "mcp_failed"]
    assert "the variable FIXTURE_UNSET is not set" in failed.detail


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_calls_progress_and_the_servers_log_stream_as_live_output(
    project: Path, transport: str
) -> None:
    outputs: list[str] = []

    def seen(event: Event) -> None:
        if isinstance(event, ev.ToolOutput):
            outputs.append(event.text)

    provider = scripted(call("mcp__fx__chatty", steps=2), {"text": "done"})
    with contextlib.ExitStack() as stack:
        if transport == "http":
            spec = ServerSpec("fx", url=stack.enter_context(http_server()))
        else:
            spec = stdio_spec(tag=marker())
        async with Store.memory() as store:
            parts = Parts(
                provider,
                store,
                policy=Policy.default().allow_mcp("fx/*"),
                sandbox=select("floor"),
                observers=(seen,),
                mcp=(spec,),
            )
            result = await start(NewRun(TaskContract.workspace("x", project)), parts)
            (made,) = await store.tool_calls(result.run_id)
    assert made.output == "chatted 2 steps"  # the result is the tool's answer alone
    lines = "".join(outputs).splitlines()
    # Each kind in its order (the two kinds reach their callbacks separately).
    assert [line for line in lines if line.startswith("[info]")] == [
        "[info] working on step 1",
        "[info] working on step 2",
    ]
    assert [line for line in lines if line.startswith("[progress")] == [
        "[progress 1/2] step 1 of 2",
        "[progress 2/2] step 2 of 2",
    ]
    assert len(lines) == 4

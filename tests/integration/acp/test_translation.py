"""What the ACP agent maps, in-process: tool kinds, diffs, the gate, the answers, MCP servers."""

from __future__ import annotations

from pathlib import Path

import pytest
from acp import RequestError
from acp.schema import (
    AgentThoughtChunk,
    EnvVariable,
    FileEditToolCallContent,
    HttpHeader,
    HttpMcpServer,
    McpServerStdio,
    SseMcpServer,
    ToolCallProgress,
    ToolCallStart,
)

from ioh_tui.acp.permission import REWRITE_META, decision_for
from ioh_tui.acp.session import client_servers
from ioh_tui.acp.updates import Translator, tool_kind
from ioh_tui.core import events as ev
from ioh_tui.core.acts import Act
from ioh_tui.core.redact import Redactor
from ioh_tui.mcp import ServerSpec
from ioh_tui.policy import ApprovalRequest


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("read_file", "read"),
        ("skill", "read"),
        ("edit_file", "edit"),
        ("exec", "execute"),
        ("grep", "search"),
        ("note", "think"),
        ("spawn_agent", "other"),
        ("mcp__web__fetch_url", "fetch"),
        ("mcp__gh__list_issues", "other"),
        ("mcp_read_resource", "read"),
        ("mcp_resources", "search"),
    ],
)
def test_each_tool_has_its_acp_kind(name: str, kind: str) -> None:
    assert tool_kind(name) == kind


def test_an_edit_shows_the_whole_file_before_and_after(tmp_path: Path) -> None:
    (tmp_path / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    translator = Translator(tmp_path)
    arguments = {"path": "calc.py", "old_text": "a - b", "new_text": "a + b"}
    (start,) = translator.updates(
        ev.ToolCallStarted(run_id=1, step=2, call_id="c", name="edit_file", arguments=arguments)
    )
    assert isinstance(start, ToolCallStart)
    assert start.content is not None
    (diff,) = start.content
    assert diff.model_dump(by_alias=True, exclude_none=True) == {
        "type": "diff",
        "path": str(tmp_path / "calc.py"),
        "oldText": "def add(a, b):\n    return a - b\n",
        "newText": "def add(a, b):\n    return a + b\n",
    }
    assert translator.open_calls == {1: start.tool_call_id}


def test_a_diff_reads_only_inside_the_workspace_and_masks_keys(tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    (tmp_path / "outside.txt").write_text("not yours\n")
    (root / "settings.py").write_text("KEY = 'sk-live-0123456789abcdef'\n")
    translator = Translator(root, redactor=Redactor(["sk-live-0123456789abcdef"]))

    def started(path: str) -> ToolCallStart:
        arguments = {"path": path, "content": "x\n"}
        (update,) = translator.updates(
            ev.ToolCallStarted(
                run_id=1, step=1, call_id=path, name="write_file", arguments=arguments
            )
        )
        assert isinstance(update, ToolCallStart)
        return update

    assert started("../outside.txt").content is None
    (diff,) = started("settings.py").content or []
    assert isinstance(diff, FileEditToolCallContent)
    assert diff.old_text is not None and "sk-live-0123456789abcdef" not in diff.old_text
    assert diff.old_text.startswith("KEY = ")


def test_a_diff_never_shows_what_the_read_policy_denies_or_a_symlink_leads_to(
    tmp_path: Path,
) -> None:
    root = tmp_path / "project"
    root.mkdir()
    (tmp_path / "outside.txt").write_text("not yours\n")
    (root / "link.txt").symlink_to(tmp_path / "outside.txt")
    (root / ".env").write_text("TOKEN=hunter2\n")
    translator = Translator(root)
    for path in ("link.txt", ".env"):
        (update,) = translator.updates(
            ev.ToolCallStarted(
                run_id=1,
                step=1,
                call_id=path,
                name="write_file",
                arguments={"path": path, "content": "x\n"},
            )
        )
        assert isinstance(update, ToolCallStart)
        (diff,) = update.content or []
        assert isinstance(diff, FileEditToolCallContent)
        assert diff.old_text is None and diff.new_text == "x\n"


def test_the_gate_is_an_execute_call_and_a_sub_agent_speaks_in_thoughts(tmp_path: Path) -> None:
    translator = Translator(tmp_path)
    (began,) = translator.updates(ev.VerificationStarted(run_id=1, criterion="pytest", step=3))
    (ended,) = translator.updates(
        ev.VerificationFinished(run_id=1, status="failed", detail="1 failed", step=3)
    )
    assert isinstance(began, ToolCallStart) and isinstance(ended, ToolCallProgress)
    assert (began.kind, began.status, ended.status) == ("execute", "in_progress", "failed")
    assert began.tool_call_id == ended.tool_call_id
    (thought,) = translator.updates(
        ev.TextDelta(run_id=1, agent_id=7, parent_id=1, step=1, text="hi")
    )
    assert isinstance(thought, AgentThoughtChunk)
    assert thought.content.text == "[agent-7] hi"


def _ask(act: Act, target: str, content: str | None = None) -> ApprovalRequest:
    return ApprovalRequest(act=act, target=target, content=content)


def test_each_option_is_the_answer_the_app_gives() -> None:
    remembered = decision_for(_ask(Act.EXEC, "pytest -q"), "remember", None)
    assert remembered is not None
    assert (remembered.kind, remembered.scope) == ("approve", "run")
    assert [r.describe() for r in remembered.remember] == ["exec allow pytest -q"]
    rewritten = decision_for(_ask(Act.EXEC, "rm -rf build"), "rewrite", {REWRITE_META: "ls "})
    assert rewritten is not None and (rewritten.target, rewritten.content) == ("ls", None)
    content = decision_for(_ask(Act.WRITE, "a.txt", "x"), "rewrite", {REWRITE_META: "y"})
    assert content is not None and (content.target, content.content) == (None, "y")
    assert decision_for(_ask(Act.EXEC, "ls"), "rewrite", None) is None  # asked again, without it
    deferred = decision_for(_ask(Act.EXEC, "ls"), "defer", None)
    denied = decision_for(_ask(Act.EXEC, "ls"), "deny", None)
    assert deferred is not None and deferred.kind == "defer"
    assert denied is not None and (denied.kind, denied.reason) == ("deny", "denied by the operator")


def test_the_clients_stdio_http_and_sse_servers_become_ours() -> None:
    stdio = McpServerStdio(
        name="files",
        command="/usr/bin/python3",
        args=["-m", "srv"],
        env=[EnvVariable(name="LEVEL", value="info")],
    )
    http = HttpMcpServer(
        type="http",
        name="web",
        url="http://127.0.0.1:1/mcp",
        headers=[HttpHeader(name="Authorization", value="Bearer t")],
    )
    sse = SseMcpServer(type="sse", name="old", url="http://127.0.0.1:1/sse", headers=[])
    files, web, old = client_servers([stdio, http, sse])
    assert files == ServerSpec("files", "/usr/bin/python3", ("-m", "srv"), {"LEVEL": "info"})
    assert (web.kind, web.url, dict(web.headers)) == (
        "http",
        "http://127.0.0.1:1/mcp",
        {"Authorization": "Bearer t"},
    )
    assert "Bearer" not in repr(web)  # a header's value is never shown
    assert (old.kind, old.url) == ("sse", "http://127.0.0.1:1/sse")
    relative = McpServerStdio(name="x", command="python3", args=[], env=[])
    with pytest.raises(RequestError):
        client_servers([relative])
    with pytest.raises(RequestError):
        client_servers([HttpMcpServer(type="http", name="f", url="file:///etc/x", headers=[])])

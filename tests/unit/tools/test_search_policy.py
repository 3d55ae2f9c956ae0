"""grep, find and list_dir show nothing of a file the policy does not let the model read unasked.

A denied file (the built-in secrets) is neither listed nor searched; a file whose read is `ask`
may be listed by name, but grep never shows its content without the person being asked
(issue 18, items 10 and 12).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ioh_tui.policy import Policy
from ioh_tui.tools import WORKSPACE_TOOLS, ToolSet
from tests.unit.policy.test_builtin_secrets import CREDENTIALS
from tests.unit.tools.context import context

TOKEN = "tok_5ecret_f00"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    for name in CREDENTIALS:
        (root / "deploy" / name).parent.mkdir(parents=True, exist_ok=True)
        (root / "deploy" / name).write_text(f"key = {TOKEN}\n")
    (root / "notes").mkdir()
    (root / "notes" / "private.md").write_text(f"the {TOKEN} again\n")
    (root / "README.md").write_text("token lives elsewhere\n")
    return root


async def test_search_tools_never_show_a_denied_secret(workspace: Path) -> None:
    ctx = context(workspace, Policy.default())
    tools = ToolSet(WORKSPACE_TOOLS)
    grep = await tools.dispatch("grep", {"pattern": TOKEN, "path": "deploy"}, ctx)
    assert grep.output == f'[grep "{TOKEN}" in deploy] no matches'
    found = await tools.dispatch("find", {"pattern": "*"}, ctx)
    assert found.output.splitlines()[1:] == ["README.md", "notes/private.md"]
    for folder in ("deploy", "deploy/.aws", "deploy/.docker", "deploy/.kube"):
        listed = await tools.dispatch("list_dir", {"path": folder}, ctx)
        assert [line for line in listed.output.splitlines()[1:] if line.startswith("file")] == []


async def test_grep_does_not_show_a_file_whose_read_asks(workspace: Path) -> None:
    ctx = context(workspace, Policy.default().layer("project").ask_read("notes/*"))
    grep = await ToolSet(WORKSPACE_TOOLS).dispatch("grep", {"pattern": "again"}, ctx)
    assert grep.output == '[grep "again"] no matches'

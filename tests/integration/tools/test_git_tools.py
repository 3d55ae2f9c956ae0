"""The git tools on real repositories, run by real git inside bubblewrap.

Reads leave out what the policy hides; a commit contains exactly what was staged, with the asked
message; the work tree's own hooks never run; a repository above the workspace is not touched.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
from pathlib import Path

import pytest

from ioh_tui.core.acts import Act
from ioh_tui.policy import Policy
from ioh_tui.sandbox.bwrap import BwrapSandbox
from ioh_tui.tools import ToolContext, ToolSet
from ioh_tui.tools.base import Permit, ToolResult
from ioh_tui.tools.families import GIT_TOOLS
from ioh_tui.tools.registry import WORKSPACE_TOOLS, offered
from tests.unit.tools.context import PolicyDecider, context

pytestmark = pytest.mark.skipif(
    shutil.which("bwrap") is None or shutil.which("git") is None, reason="needs bwrap and git"
)

TOOLS = ToolSet((*WORKSPACE_TOOLS, *GIT_TOOLS))
ENV = {
    **os.environ,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_AUTHOR_NAME": "Tester",
    "GIT_AUTHOR_EMAIL": "tester@example.invalid",
    "GIT_COMMITTER_NAME": "Tester",
    "GIT_COMMITTER_EMAIL": "tester@example.invalid",
}


def sh(root: Path, *argv: str) -> str:
    return subprocess.run(
        ["git", *argv], cwd=root, env=ENV, check=True, capture_output=True, text=True
    ).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    sh(root, "init", "-q", "-b", "main")
    sh(root, "config", "user.name", "Repo Owner")
    sh(root, "config", "user.email", "owner@example.invalid")
    (root / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (root / "README.md").write_text("calc\n")
    (root / ".env").write_text("TOKEN=tok_hidden_123\n")
    sh(root, "add", "calc.py", "README.md")
    sh(root, "commit", "-q", "-m", "first")
    return root


def ctx_on(root: Path, policy: Policy | None = None) -> ToolContext:
    ctx = context(root, policy or Policy.default())
    ctx.sandbox = BwrapSandbox()
    return ctx


async def call(ctx: ToolContext, tool: str, /, **args: object) -> ToolResult:
    return await TOOLS.dispatch(tool, args, ctx)


async def test_status_and_diff_show_an_edit(repo: Path) -> None:
    (repo / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (repo / "new.txt").write_text("n\n")
    ctx = ctx_on(repo)
    status = await call(ctx, "git_status")
    assert status.ok, status.output
    assert "on branch main" in status.output
    assert "not staged:\n  M calc.py" in status.output
    assert "untracked:\n  ? new.txt" in status.output
    diff = await call(ctx, "git_diff")
    assert "-    return a - b" in diff.output and "+    return a + b" in diff.output
    staged = await call(ctx, "git_diff", staged=True)
    assert staged.output.startswith("[git_diff] 0 files"), staged.output


async def test_reads_leave_out_what_the_policy_hides(repo: Path) -> None:
    sh(repo, "add", "-f", ".env")  # a secret in the index: status and diff must not show it
    (repo / ".env").write_text("TOKEN=tok_hidden_456\n")
    ctx = ctx_on(repo)
    status = await call(ctx, "git_status")
    assert ".env" not in status.output and "paths the policy hides" in status.output
    for staged in (False, True):
        diff = await call(ctx, "git_diff", staged=staged)
        assert "tok_hidden" not in diff.output and ".env" not in diff.output
        assert "left out" in diff.output
    sh(repo, "commit", "-q", "-m", "oops")
    shown = await call(ctx, "git_show", rev="HEAD")
    assert "oops" in shown.output and "tok_hidden" not in shown.output


async def test_a_commit_holds_only_the_staged_paths_with_the_asked_message(repo: Path) -> None:
    (repo / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (repo / "README.md").write_text("calc, fixed\n")
    ctx = ctx_on(repo)
    added = await call(ctx, "git_add", paths=["calc.py"])
    assert added.ok and added.changed, added.output
    committed = await call(ctx, "git_commit", message="Fix add\n\nIt subtracted.")
    assert committed.ok, committed.output
    assert sh(repo, "log", "-1", "--format=%B").strip() == "Fix add\n\nIt subtracted."
    assert sh(repo, "show", "--name-only", "--format=", "HEAD").split() == ["calc.py"]
    assert "M README.md" in sh(repo, "status", "--short")  # not staged, so not committed
    decider = ctx.decide
    assert isinstance(decider, PolicyDecider)
    # Under the default tiers both changes ask; the commit's ask is on the repository.
    assert (Act.WRITE, "calc.py") in decider.asked and (Act.WRITE, ".git") in decider.asked
    log = await call(ctx, "git_log", max_count=5)
    assert log.output.splitlines()[0] == "[git_log] 2 commits"
    assert log.output.splitlines()[1].endswith("Repo Owner: Fix add")  # the repository's identity


async def test_with_no_identity_anywhere_the_commit_is_the_agent_s(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sh(repo, "config", "--unset", "user.name")
    sh(repo, "config", "--unset", "user.email")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", "/dev/null")
    (repo / "calc.py").write_text("x = 3\n")
    ctx = ctx_on(repo)
    await call(ctx, "git_add", paths=["calc.py"])
    assert (await call(ctx, "git_commit", message="anonymous")).ok
    assert sh(repo, "log", "-1", "--format=%an <%ae>").strip() == (
        "ioh-tui agent <agent@ioh-tui.invalid>"
    )


async def test_nothing_staged_is_said(repo: Path) -> None:
    result = await call(ctx_on(repo), "git_commit", message="empty")
    assert not result.ok and "nothing is staged" in result.output


async def test_a_denied_commit_changes_nothing(repo: Path) -> None:
    (repo / "calc.py").write_text("x = 1\n")
    ctx = ctx_on(repo)
    await call(ctx, "git_add", paths=["calc.py"])
    assert isinstance(ctx.decide, PolicyDecider)
    ctx.decide.approve = False
    refused = await call(ctx, "git_commit", message="no")
    assert refused.refused
    assert sh(repo, "rev-list", "--count", "HEAD").strip() == "1"


async def test_work_tree_hooks_never_run(repo: Path) -> None:
    hooks = repo / ".githooks"
    hooks.mkdir()
    marker = repo / "hook-ran"
    (hooks / "pre-commit").write_text(f"#!/bin/sh\ntouch {marker}\n")
    (hooks / "pre-commit").chmod(0o755)
    sh(repo, "config", "core.hooksPath", ".githooks")
    (repo / "calc.py").write_text("x = 2\n")
    ctx = ctx_on(repo)
    await call(ctx, "git_add", paths=["calc.py"])
    committed = await call(ctx, "git_commit", message="with a hook around")
    assert committed.ok, committed.output
    assert not marker.exists()


async def test_branch_and_switch(repo: Path) -> None:
    ctx = ctx_on(repo)
    created = await call(ctx, "git_branch", name="feature")
    assert created.ok, created.output
    listed = await call(ctx, "git_branch")
    assert "* main" in listed.output and "  feature" in listed.output
    switched = await call(ctx, "git_switch", name="feature")
    assert switched.ok, switched.output
    assert sh(repo, "branch", "--show-current").strip() == "feature"


async def test_options_in_disguise_are_refused(repo: Path) -> None:
    ctx = ctx_on(repo)
    for name, args in (
        ("git_show", {"rev": "--output=/tmp/x"}),
        ("git_branch", {"name": "-D"}),
        ("git_diff", {"rev": "HEAD; rm -rf /"}),
    ):
        result = await TOOLS.dispatch(name, args, ctx)
        assert not result.ok and "must be a revision" in result.output, result.output


async def test_a_workspace_that_is_not_a_repository_is_said(tmp_path: Path) -> None:
    outer = tmp_path / "outer"
    (outer / "inner").mkdir(parents=True)
    sh(outer, "init", "-q")
    for root in (tmp_path / "outer" / "inner", tmp_path):
        result = await call(ctx_on(root), "git_status")
        assert not result.ok
        assert "not a git repository" in result.output, result.output


async def test_a_push_cannot_reach_the_network(repo: Path) -> None:
    """There is no push tool, and an allowed `exec` of git push gets no network by default."""
    assert TOOLS.get("git_push") is None
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        server.settimeout(0.5)
        port = server.getsockname()[1]
        sh(repo, "remote", "add", "origin", f"http://127.0.0.1:{port}/repo.git")
        ctx = ctx_on(repo, Policy.default().layer("test").allow_exec("git *"))
        pushed = await call(ctx, "exec", argv=["git", "push", "origin", "main"])
        assert not pushed.ok, pushed.output
        with pytest.raises(TimeoutError):
            server.accept()  # the push never reached the host's loopback


async def test_a_rewritten_message_is_the_one_committed(repo: Path) -> None:
    (repo / "calc.py").write_text("x = 4\n")
    ctx = ctx_on(repo, Policy.permissive())
    await call(ctx, "git_add", paths=["calc.py"])

    async def rewrite(act: Act, target: str, **kw: object) -> Permit:
        return Permit(target, "Rewritten by a person" if target == ".git" else None, "rewritten")

    ctx.decide = rewrite
    committed = await call(ctx, "git_commit", message="as the model wrote it")
    assert committed.ok and "rewritten" in committed.output
    assert sh(repo, "log", "-1", "--format=%s").strip() == "Rewritten by a person"


def test_git_tools_are_offered_only_in_a_repository(repo: Path, tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    in_repo = {t.spec.name for t in offered("workspace", tree=False, root=repo)}
    elsewhere = {t.spec.name for t in offered("workspace", tree=True, root=plain)}
    assert {"git_status", "git_commit", "exec"} <= in_repo
    assert "git_status" not in elsewhere and "spawn_agent" in elsewhere
    assert [t.spec.name for t in offered("single_file", tree=False, root=repo)] == [
        "read_file",
        "write_file",
    ]

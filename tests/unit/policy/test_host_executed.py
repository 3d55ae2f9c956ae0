"""Files the host runs: a write always asks a person unless a rule names the file exactly
(issue 18, item 4)."""

from __future__ import annotations

import pytest

from ioh_tui.core.acts import Act, Effect
from ioh_tui.policy import ApprovalRequest, ApproveAll, Layer, Policy, Rule
from ioh_tui.policy.builtin import HOST_EXECUTED_LAYER

PROTECTED = (
    ".git/config",
    "vendor/lib/.git/config",
    ".git/hooks/pre-commit",
    ".envrc",
    ".vscode/tasks.json",
    ".vscode/settings.json",
    ".idea/workspace.xml",
    ".pre-commit-config.yaml",
    ".husky/pre-push",
)
BROAD = Policy().layer("project").allow_write("*", ".git/*", ".vscode/*")


@pytest.mark.parametrize("target", PROTECTED)
def test_no_broad_rule_lets_an_agent_write_a_file_the_host_runs(target: str) -> None:
    verdict = BROAD.explain(Act.WRITE, target)
    assert (verdict.effect, verdict.layer) == (Effect.ASK, HOST_EXECUTED_LAYER)
    assert verdict.rule is not None and "the host runs it" in verdict.rule
    remembered = Policy().with_layer(Layer("remembered", (Rule(Act.WRITE, Effect.ALLOW, "*"),)))
    assert remembered.check(Act.WRITE, target) is Effect.ASK


@pytest.mark.parametrize("target", PROTECTED)
def test_a_rule_naming_the_file_exactly_allows_it(target: str) -> None:
    assert BROAD.allow_write(target).check(Act.WRITE, target) is Effect.ALLOW


def test_a_deny_still_wins_and_ordinary_project_files_are_not_protected() -> None:
    assert BROAD.deny_write(".envrc").allow_write(".envrc").check(Act.WRITE, ".envrc") is (
        Effect.DENY
    )
    for ordinary in ("Makefile", "src/app.py", ".github/workflows/ci.yml", "config", ".gitignore"):
        assert BROAD.check(Act.WRITE, ordinary) is Effect.ALLOW
    assert BROAD.check(Act.READ, ".git/config") is Effect.ALLOW


@pytest.mark.parametrize("target", PROTECTED)
async def test_a_blanket_approver_does_not_cover_them(target: str) -> None:
    decision = await ApproveAll().decide(ApprovalRequest(Act.WRITE, target))
    assert decision.kind == "deny" and "run by the host" in decision.reason
    assert (await ApproveAll().decide(ApprovalRequest(Act.WRITE, "src/a.py"))).kind == "approve"

"""The decision gate alone: deny-first, asks persisted before the approver is asked, rewrites
re-checked. A real in-memory store, a recording approver, no loop and no sandbox."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from ioh_tui.core.events import ApprovalRequested, ApprovalResolved, Event
from ioh_tui.engine.cancel import CancelToken
from ioh_tui.engine.decide import DecisionGate, DecisionRules
from ioh_tui.engine.ids import Who
from ioh_tui.policy import Act, ApprovalRequest, Decision, Effect, Policy, Rule
from ioh_tui.store import Store
from ioh_tui.tools import Deferral, Permit, Refusal, Workspace


class Recording:
    """An approver that gives one decision and remembers every request it was shown."""

    def __init__(self, decision: Decision) -> None:
        self.decision = decision
        self.asked: list[ApprovalRequest] = []

    async def decide(self, request: ApprovalRequest) -> Decision:
        self.asked.append(request)
        return self.decision


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    async with Store.memory() as opened:
        yield opened


async def _gate(
    store: Store, root: Path, policy: Policy, approver: Recording, events: list[Event]
) -> tuple[DecisionGate, int]:
    run_id = await store.start_run(
        goal="g",
        mode="workspace",
        root=str(root),
        subject=None,
        contract={},
        provider="scripted",
        model=None,
        sandbox="floor",
    )
    gate = DecisionGate(
        rules=DecisionRules(policy),
        workspace=Workspace.at(root),
        approver=approver,
        store=store,
        emit=events.append,
        cancel=CancelToken(),
        base=ApprovalRequest(act=Act.READ, target="", run_id=run_id, step=1, tool="exec"),
        who=Who(run_id),
        call_id="c1",
    )
    return gate, run_id


async def test_a_denied_act_is_refused_without_asking_or_persisting_a_request(
    store: Store, tmp_path: Path
) -> None:
    approver = Recording(Decision.approve())
    events: list[Event] = []
    policy = Policy.default().layer("team").deny_exec("rm *")
    gate, run_id = await _gate(store, tmp_path, policy, approver, events)

    answer = await gate(Act.EXEC, "rm -rf build")

    assert isinstance(answer, Refusal)
    assert "rule 'rm *' in layer 'team'" in answer.observation
    assert approver.asked == []
    assert events == []
    assert await store.approvals(run_id) == []
    assert len(await store.policy_events(run_id)) == 1  # the refusal is on the record


async def test_an_allowed_act_passes_without_a_trace(store: Store, tmp_path: Path) -> None:
    approver = Recording(Decision.deny())
    gate, run_id = await _gate(store, tmp_path, Policy.permissive(), approver, [])

    answer = await gate(Act.WRITE, "notes.md", content="hi")

    assert answer == Permit("notes.md", "hi")
    assert approver.asked == []
    assert await store.policy_events(run_id) == []


async def test_an_ask_is_persisted_then_announced_then_decided(
    store: Store, tmp_path: Path
) -> None:
    approver = Recording(Decision.approve())
    events: list[Event] = []
    gate, run_id = await _gate(store, tmp_path, Policy.default(), approver, events)

    answer = await gate(Act.EXEC, "make test")

    assert answer == Permit("make test", None)
    [request] = approver.asked
    assert request.request_id is not None and request.target == "make test"
    assert len(await store.approvals(run_id)) == 1
    assert [type(e) for e in events] == [ApprovalRequested, ApprovalResolved]


async def test_a_deferred_ask_pauses(store: Store, tmp_path: Path) -> None:
    gate, _ = await _gate(store, tmp_path, Policy.default(), Recording(Decision.defer()), [])

    answer = await gate(Act.EXEC, "make test")

    assert isinstance(answer, Deferral)


async def test_an_approved_rewrite_may_not_cross_a_deny(store: Store, tmp_path: Path) -> None:
    approver = Recording(Decision.rewrite(target="rm -rf /"))
    policy = Policy.default().layer("team").deny_exec("rm *")
    gate, _ = await _gate(store, tmp_path, policy, approver, [])

    answer = await gate(Act.EXEC, "make clean")

    assert isinstance(answer, Refusal)
    assert "an approved rewrite may not cross a deny" in answer.observation


def test_a_remembered_rule_cannot_beat_a_deny() -> None:
    rules = DecisionRules(Policy.default().layer("team").deny_exec("rm *"))
    rules.remembered.append(Rule(Act.EXEC, Effect.ALLOW, "*"))

    assert rules.effective().check(Act.EXEC, "rm -rf build") is Effect.DENY
    assert rules.effective().check(Act.EXEC, "make test") is Effect.ALLOW
    assert rules.policy.check(Act.EXEC, "make test") is Effect.ASK

"""A decision's row form: what `Decision.to_row` writes is what `Decision.from_row` reads back."""

from __future__ import annotations

from pathlib import Path

import pytest

from ioh_tui.core.acts import Act, Effect
from ioh_tui.policy import ApprovalRequest, Decision, Rule
from ioh_tui.store import Store

REQUEST = ApprovalRequest(Act.WRITE, "notes/a.md", content="draft", tool="write_file")
NOTES = Rule(Act.WRITE, Effect.ALLOW, "notes/*")
SPACED = Rule(Act.EXEC, Effect.ALLOW, "make test *")


async def _answered(store: Store, run_id: int, decision: Decision) -> Decision:
    """Ask, answer with `decision` through the store, and read the decision back."""
    request_id = await store.create_approval(
        run_id, 1, {"act": REQUEST.act.value, "target": REQUEST.target, "content": REQUEST.content}
    )
    assert await store.answer_approval(request_id, decision.to_row(REQUEST), by="queue")
    assert not await store.answer_approval(request_id, Decision.deny().to_row(), by="late")
    row = await store.approval(request_id)
    assert row is not None and row.decided_by == "queue"
    return Decision.from_row(row.answer)


@pytest.mark.parametrize(
    ("decision", "expected"),
    [
        (Decision.approve(), Decision.approve()),
        (Decision.deny("use the docs folder"), Decision.deny("use the docs folder")),
        # A rewrite of the content alone is recorded as performed: the request's target with it.
        (
            Decision.rewrite(content="final"),
            Decision.rewrite(target="notes/a.md", content="final"),
        ),
        (
            Decision.rewrite(target="notes/b.md"),
            Decision.rewrite(target="notes/b.md", content="draft"),
        ),
        (Decision.remembering(NOTES, SPACED), Decision.remembering(NOTES, SPACED)),
    ],
)
async def test_a_decision_reads_back_as_it_was_given(
    store: Store, run_id: int, decision: Decision, expected: Decision
) -> None:
    assert await _answered(store, run_id, decision) == expected


async def test_a_remembered_file_scope_reads_back_as_its_rules(
    store: Store, run_id: int, tmp_path: Path
) -> None:
    given = Decision.remembering(NOTES, scope="file", file=tmp_path / "policy.toml")
    assert await _answered(store, run_id, given) == Decision.remembering(NOTES)


def test_a_deferral_has_no_row_form() -> None:
    with pytest.raises(ValueError, match="pending"):
        Decision.defer().to_row(REQUEST)


def test_a_denial_keeps_only_its_reason() -> None:
    answer = Decision.deny("no").to_row(REQUEST)
    assert (answer.status, answer.reason, answer.performed_target, answer.remembered) == (
        "deny",
        "no",
        None,
        (),
    )

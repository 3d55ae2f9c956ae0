"""Answering a deferred decision from the store: the decision modal, then the run resumes.

The modal is the run view's own (`ApprovalModal`), showing the request exactly as it was stored.
Approve, rewrite, remember and deny resume the run with that answer; defer (or esc) leaves the
request pending, as it was.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from textual.binding import Binding, BindingType
from textual.screen import Screen

from ioh_tui.engine.decide import request_from_row
from ioh_tui.policy import Decision
from ioh_tui.store import ApprovalRow
from ioh_tui.tui.messages import ResumeRequested
from ioh_tui.tui.screens.approval import SPLIT_FROM, ApprovalModal


class StoredApprovalModal(ApprovalModal):
    """The decision modal over a stored request: no run is going, so esc leaves it pending."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "escape",
            "back",
            "Back / leave pending",
            tooltip="Leave the form; on the choices, close and leave the decision pending",
        ),
    ]
    """Escape replaces the run view's "stop the run": here there is no run to stop."""

    async def action_back(self) -> None:
        """esc: leave a form; on the choices, close without answering."""
        if self.mode != "choices":
            self.action_mode("choices")
            return
        self.dismiss(Decision.defer())


def answer_stored(screen: Screen[Any], row: ApprovalRow, *, remember_file: Path) -> None:
    """Show a stored pending request; an answer other than defer resumes its run with it.

    Args:
        screen: The screen it is answered from (it asks the app to resume the run).
        row: The request's `approvals` row.
        remember_file: The default file for a remembered rule.
    """
    request = request_from_row(row)
    app = screen.app
    modal = StoredApprovalModal(
        request, remember_file=remember_file, wide=app.size.width >= SPLIT_FROM
    )

    def answered(decision: Decision | None) -> None:
        if decision is None or decision.kind == "defer":
            app.notify(f"Run {request.run_id}'s decision is still pending.", timeout=3)
            return
        screen.post_message(ResumeRequested(request.run_id, decision))

    app.push_screen(modal, callback=answered)

"""The agent loop: from a task contract to a checked result. Never imports Textual."""

from ioh_tui.engine.api import (
    check_contract,
    resume,
    resume_with_decision,
    run,
    run_tree,
    start,
)
from ioh_tui.engine.budgets import BudgetRaises
from ioh_tui.engine.bus import EventBus, Observer
from ioh_tui.engine.cancel import CancelToken, RunCancelled
from ioh_tui.engine.contract import (
    EXIT_STATUS,
    OUTCOMES,
    RunResult,
    TaskContract,
    load_contract_file,
)
from ioh_tui.engine.request import NewRun, Parts, Resume, RunRequest
from ioh_tui.engine.tree import Containment

__all__ = [
    "EXIT_STATUS",
    "OUTCOMES",
    "BudgetRaises",
    "CancelToken",
    "Containment",
    "EventBus",
    "NewRun",
    "Observer",
    "Parts",
    "Resume",
    "RunCancelled",
    "RunRequest",
    "RunResult",
    "TaskContract",
    "check_contract",
    "load_contract_file",
    "resume",
    "resume_with_decision",
    "run",
    "run_tree",
    "start",
]

"""What an agent may do: layered allow / ask / deny rules, and the approvers that answer asks.

Standard library and `ioh_tui.core` only, so the engine and headless commands can use it without
loading the app.
"""

from ioh_tui.core.acts import Act, Effect
from ioh_tui.policy.approver import (
    ApprovalRequest,
    ApproveAll,
    Approver,
    Decision,
    DeferAll,
    DenyAll,
    StdinApprover,
)
from ioh_tui.policy.rules import (
    BUILTIN_SECRETS,
    SECRET_PATTERNS,
    Policy,
    append_rules_to_file,
    load_policy_file,
)
from ioh_tui.policy.types import Defaults, Layer, Rule, Verdict

__all__ = [
    "BUILTIN_SECRETS",
    "SECRET_PATTERNS",
    "Act",
    "ApprovalRequest",
    "ApproveAll",
    "Approver",
    "Decision",
    "Defaults",
    "DeferAll",
    "DenyAll",
    "Effect",
    "Layer",
    "Policy",
    "Rule",
    "StdinApprover",
    "Verdict",
    "append_rules_to_file",
    "load_policy_file",
]

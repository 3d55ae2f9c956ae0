"""What the model sees each turn: the window it has, the tokens a request uses, and the fit.

Pure code over `core.transcript` messages: nothing here calls a model or touches the store; the
engine asks for a compaction's summary and keeps it.
"""

from ioh_tui.context.builder import Context
from ioh_tui.context.compaction import lead, summary_request
from ioh_tui.context.fit import Fitted, fit
from ioh_tui.context.tokens import Gauge, estimate
from ioh_tui.context.windows import DEFAULT_WINDOW, window_for

__all__ = [
    "DEFAULT_WINDOW",
    "Context",
    "Fitted",
    "Gauge",
    "estimate",
    "fit",
    "lead",
    "summary_request",
    "window_for",
]

"""Hooks: the user's commands run at fixed points of a run (docs/extending.md, "Hooks").

`spec` reads `[[hooks.EVENT]]` entries into a `HookSet`; `protocol` builds what a hook reads on
stdin and checks what it answers on stdout; `runner` runs one hook in the run's sandbox with its
timeout. What an answer does to the run (the policy's part in it) is the engine's
(`engine/hooked.py`).
"""

from __future__ import annotations

from ioh_tui.hooks.protocol import (
    STOP_BLOCK_LIMIT,
    BadAnswer,
    PostAnswer,
    PreAnswer,
    StopAnswer,
    payload_json,
    read_post,
    read_pre,
    read_stop,
)
from ioh_tui.hooks.runner import HookRun, run_hook
from ioh_tui.hooks.spec import EVENTS, Hook, HookSet, matches

__all__ = [
    "EVENTS",
    "STOP_BLOCK_LIMIT",
    "BadAnswer",
    "Hook",
    "HookRun",
    "HookSet",
    "PostAnswer",
    "PreAnswer",
    "StopAnswer",
    "matches",
    "payload_json",
    "read_post",
    "read_pre",
    "read_stop",
    "run_hook",
]

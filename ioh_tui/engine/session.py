"""Building a drive: its `Deps` for a run's workspace, and its `RunState` new or from the store.

The one place a stored run is read back into a state (transcript, tokens, the journal of the step
a crash cut), for a resumed root (`api.py`) and an adopted child (`tree.py`) alike.
"""

from __future__ import annotations

from ioh_tui.engine.budgets import BudgetRaises
from ioh_tui.engine.bus import EventBus
from ioh_tui.engine.cancel import CancelToken
from ioh_tui.engine.contract import TaskContract
from ioh_tui.engine.decide import DecisionRules
from ioh_tui.engine.ids import Who
from ioh_tui.engine.instructions import find_instructions
from ioh_tui.engine.state import Deps, RunState, Spawner
from ioh_tui.policy import Approver
from ioh_tui.providers.base import Provider
from ioh_tui.sandbox.base import Sandbox
from ioh_tui.store import Store
from ioh_tui.toolchain import detect
from ioh_tui.tools import SINGLE_FILE_TOOLS, WORKSPACE_TOOLS, Tool, ToolSet, Workspace
from ioh_tui.tools.registry import TREE_TOOLS


def root_deps(
    run_id: int,
    contract: TaskContract,
    *,
    provider: Provider,
    store: Store,
    sandbox: Sandbox,
    approver: Approver,
    bus: EventBus,
    cancel: CancelToken,
    spawner: Spawner,
    raises: BudgetRaises | None,
    tree: bool,
) -> Deps:
    """What a root drive works with; a tree's root gets the spawn tool and names itself."""
    tools: tuple[Tool, ...] = TREE_TOOLS
    if not tree:
        tools = SINGLE_FILE_TOOLS if contract.mode == "single_file" else WORKSPACE_TOOLS
    # Detected once per drive; single-file mode has no exec and no other files, so no project.
    found = detect(contract.root) if contract.mode == "workspace" else None
    return Deps(
        run_id=run_id,
        # A tree's events name their agent, the root included.
        who=Who(run_id, run_id, None) if tree else Who(run_id),
        provider=provider,
        store=store,
        sandbox=sandbox,
        approver=approver,
        tools=ToolSet(tools),
        workspace=Workspace.at(contract.root),
        bus=bus,
        cancel=cancel,
        spawner=spawner,
        toolchain=found,
        project=found.describe() if found is not None else None,
        instructions=find_instructions(contract.root) if contract.mode == "workspace" else None,
        raises=raises,
    )


async def resumed_state(
    store: Store, run_id: int, contract: TaskContract, rules: DecisionRules, tokens: int
) -> tuple[RunState, int]:
    """A stored run's state, and its last committed step.

    The journal holds the completed calls of the step after it (the one a crash may have cut).
    """
    history = [m.message for m in await store.messages(run_id)]
    last = await store.last_step(run_id)
    # The latest attempt per call wins.
    journal = {(last + 1, a.seq): a for a in await store.attempts(run_id, step=last + 1)}
    return RunState(contract, rules, history, tokens, journal), last

"""Building a drive: its `Deps` for a run's workspace, and its `RunState` new or from the store.

The one place a stored run is read back into a state (transcript, tokens, the journal of the step
a crash cut), for a resumed root (`api.py`) and an adopted child (`tree.py`) alike.
"""

from __future__ import annotations

from collections.abc import Sequence

from ioh_tui.config.locations import PROJECT_DIR, user_dir
from ioh_tui.core.control import Stop
from ioh_tui.core.errors import ResumeError
from ioh_tui.core.transcript import Message
from ioh_tui.engine.budgets import BudgetRaises
from ioh_tui.engine.bus import EventBus
from ioh_tui.engine.cancel import CancelToken
from ioh_tui.engine.contract import TaskContract
from ioh_tui.engine.decide import DecisionRules
from ioh_tui.engine.ids import Who
from ioh_tui.engine.instructions import find_instructions
from ioh_tui.engine.state import Deps, RunState, Spawner
from ioh_tui.hooks import HookSet
from ioh_tui.mcp import ServerSpec
from ioh_tui.policy import Approver, Decision
from ioh_tui.providers.base import Provider
from ioh_tui.sandbox.base import Sandbox
from ioh_tui.skills import Skills, find_skills
from ioh_tui.store import ApprovalRow, Store
from ioh_tui.toolchain import detect
from ioh_tui.tools import ToolSet, Workspace
from ioh_tui.tools.registry import offered
from ioh_tui.tools.skill import skill_tool
from ioh_tui.tools.vision import vision_of


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
    mcp: tuple[ServerSpec, ...] = (),
    hooks: HookSet | None = None,
) -> Deps:
    """What a root drive works with; a tree's root gets the spawn tool and names itself."""
    hints = f"{contract.goal}\n{contract.verification.describe()}"
    tools = offered(
        contract.mode,
        tree=tree,
        root=contract.root,
        hints=hints,
        vision=vision_of(provider),
    )
    skills = Skills()
    if contract.mode == "workspace":
        skills = find_skills(
            # The user's first: a cloned project cannot shadow a skill the user wrote.
            [
                ("user", user_dir() / "skills"),
                ("project", contract.root / PROJECT_DIR / "skills"),
            ]
        )
    if skills:
        tools = (*tools, skill_tool(skills))
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
        skills=skills,
        raises=raises,
        mcp=mcp,
        hooks=hooks or HookSet(),
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


async def carried(store: Store, continues: Sequence[int], goal: str) -> list[Message]:
    """The conversation a run carries on (none when `continues` is empty), read from the store.

    Each earlier run's goal as the user's message and its committed transcript, then this run's
    goal: the user's latest word, so the request never ends on an earlier answer. A call an
    earlier run never answered (it ended while paused on it) gets a result saying so, as every
    provider wants each call answered. Rebuilt the same way by a resume, so a stored summary's
    turn count still matches.
    """
    if not continues:
        return []
    history: list[Message] = []
    for run_id in continues:
        history.append(Message("user", (await store.run(run_id)).goal))
        messages = [m.message for m in await store.messages(run_id)]
        history.extend(messages)
        answered = {m.tool_call_id for m in messages if m.role == "tool"}
        for message in messages:
            history.extend(
                Message("tool", "(not run: that run ended before this call was answered)", (), c.id)
                for c in message.tool_calls
                if c.id not in answered
            )
    history.append(Message("user", goal))
    return history


def paused_on(
    run_id: int,
    requests: list[ApprovalRow],
    pending: list[ApprovalRow],
    decision: Decision | None,
    history: list[Message],
) -> tuple[ApprovalRow, Decision | None] | None:
    """The request a paused run stopped on, and the answer to settle it with.

    Still pending: the answer given (None: the approver is asked). Answered in the store while the
    run was paused (the decision queue answers several at once): that answer, without asking
    again. A run pauses at its first deferred request and asks nothing after it, so that request
    is the run's latest; it is the pause only while its call has no result in the transcript (a
    tree's agent may have paused instead on a sub-agent's decision, after answered requests).
    """
    if pending:
        return pending[-1], decision
    latest = requests[-1] if requests else None
    if latest is None or latest.status not in ("approve", "deny"):
        return None
    if not _unanswered(history, latest.call_id):
        return None
    if decision is not None:
        raise ResumeError(f"run {run_id}'s decision was already answered; resume it as is")
    return latest, Decision.from_row(latest.answer)


def _unanswered(history: list[Message], call_id: str) -> bool:
    """Whether the last assistant turn made the call `call_id` and no tool result answers it."""
    for at in range(len(history) - 1, -1, -1):
        message = history[at]
        if message.role == "assistant":
            answered = {m.tool_call_id for m in history[at + 1 :] if m.role == "tool"}
            return call_id in {c.id for c in message.tool_calls} and call_id not in answered
    return False


async def held_below(store: Store, run_id: int) -> Stop | None:
    """How an agent stops while a sub-agent below it waits on a decision, or None.

    The detail names the agent and the request (the oldest of the subtree, the one a resume's
    answer goes to).
    """
    waiting = await store.pending_below(run_id)
    if not waiting:
        return None
    request = await store.approval(waiting[0])
    assert request is not None  # just read
    agent = await store.run(request.run_id)
    return Stop(
        "awaiting_approval",
        await store.last_step(run_id),
        f"{agent.agent_label} (run {agent.id}) waits on a decision: request {request.id}, "
        f"{request.act} {request.target}",
        request_id=request.id,
    )

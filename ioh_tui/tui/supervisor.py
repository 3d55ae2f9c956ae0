"""RunSupervisor: the one run an app drives — its engine task, stop switch, raised budgets, outcome.

No Textual here: the app hosts `RunSupervisor.begin`'s coroutine in a worker and reports back how
the worker ended; the run screen reads `running` and `engine` through the `Supervision` protocol.
The engine and the store are imported when a run begins: the app builds a supervisor before its
first frame, which must not wait for them (benchmarks/bench_tui_first_frame.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ioh_tui.core.errors import ConfigError

if TYPE_CHECKING:
    from ioh_tui.engine import BudgetRaises, CancelToken, Observer, RunResult, TaskContract
    from ioh_tui.policy import Approver
    from ioh_tui.tui.app_run import PartsSource, RunContext

CLOSE_GRACE_S = 5.0
"""How long closing the app waits for a stopped run to record its outcome."""


class Supervision(Protocol):
    """What a run screen may know of the run it shows (attributes down)."""

    @property
    def running(self) -> bool:
        """Whether the run is being driven now."""
        ...

    @property
    def engine(self) -> asyncio.Future[RunResult] | None:
        """The engine's task (the workspace panes follow the run until it is done)."""
        ...

    @property
    def raises(self) -> BudgetRaises | None:
        """Where an answered budget offer is told to the engine (which holds for it)."""
        ...


class RunSupervisor:
    """Starts, stops and raises the budgets of one run at a time, and keeps how it ended."""

    def __init__(self, store_path: Path) -> None:
        self.store_path = store_path
        """The store every run is recorded in."""
        self.engine: asyncio.Future[RunResult] | None = None
        """The engine's task (the app's run worker awaits it)."""
        self.cancel: CancelToken | None = None
        """The running run's stop switch."""
        self.raises: BudgetRaises | None = None
        """Where budgets raised mid-run wait for the engine to take them."""
        self.result: RunResult | None = None
        """How the run ended (set when its worker returns)."""
        self.error: BaseException | None = None
        """Why the run's worker failed, if it did."""

    @property
    def running(self) -> bool:
        """Whether a run is being driven now."""
        return self.engine is not None and not self.engine.done()

    @property
    def exit_status(self) -> int:
        """The run's documented exit status (0 when no run was started; 2 for a bad setup)."""
        if self.result is not None:
            return self.result.exit_status
        if isinstance(self.error, ConfigError | ValueError):
            return 2
        return 1 if self.error is not None else 0

    def clear(self) -> None:
        """Forget the last run: the next one's result, error and exit status become the app's."""
        self.result = self.error = self.engine = self.cancel = self.raises = None

    def begin(
        self,
        source: PartsSource,
        *,
        observer: Observer,
        approver: Approver,
        tell: Callable[[RunContext], None],
    ) -> Coroutine[Any, Any, RunResult]:
        """Start the engine on `source`'s run; returns the coroutine the app's run worker awaits.

        The engine runs in its own task, supervised by the worker: Textual cancels workers on exit
        without waiting, and the engine must still get to record how the run ended.
        """
        from ioh_tui.engine import BudgetRaises, CancelToken

        self.cancel = cancel = CancelToken()
        self.raises = BudgetRaises(offered=True)  # the run view offers raises: the engine holds
        self.engine = engine = asyncio.ensure_future(
            drive(
                source,
                self.store_path,
                observer=observer,
                approver=approver,
                cancel=cancel,
                tell=tell,
                raises=self.raises,
            )
        )
        return self._supervise(engine, cancel)

    @staticmethod
    async def _supervise(engine: asyncio.Future[RunResult], cancel: CancelToken) -> RunResult:
        """Wait for the engine; if the waiting is cancelled (the app closes), stop the run."""
        try:
            return await asyncio.shield(engine)
        except asyncio.CancelledError:
            cancel.cancel("the app was closed")
            raise

    def stop(self, reason: str) -> bool:
        """Stop the run now (the engine ends it `cancelled`); False when no run is going."""
        if self.cancel is None or not self.running:
            return False
        self.cancel.cancel(reason)
        if self.raises is not None:
            self.raises.close()  # a budget offer's hold ends with the run
        return True

    def raise_budget(self, name: str, limit: float) -> bool:
        """Raise one budget of the running run; False when no run is going.

        Raises:
            ConfigError: The engine refuses the new limit (one line for the person).
        """
        if self.raises is None or not self.running:
            return False
        self.raises.raise_to(**{name: limit})
        return True

    async def close(self, grace_s: float = CLOSE_GRACE_S) -> None:
        """Closing mid-run: stop the run and let the engine record `cancelled` before the end.

        Without this wait, the engine's clean-up (recording the outcome, releasing the run's
        lease, draining the event log) would race the event loop's shutdown.
        """
        engine = self.engine
        if engine is None or engine.done():
            return
        if self.cancel is not None:
            self.cancel.cancel("the app was closed")
        if self.raises is not None:
            self.raises.close()
        await asyncio.wait({engine}, timeout=grace_s)
        if engine.done() and not engine.cancelled() and engine.exception() is None:
            self.result = engine.result()


async def drive(
    source: PartsSource,
    store_path: Path,
    *,
    observer: Observer,
    approver: Approver,
    cancel: CancelToken,
    tell: Callable[[RunContext], None],
    raises: BudgetRaises | None = None,
) -> RunResult:
    """Open the run and the store, tell the screen the context, and run it to its outcome.

    Args:
        source: Opens the run (its request, provider, policy, sandbox and label).
        store_path: The store the run is recorded in.
        observer: Takes every engine event (the app's posts each to the run screen).
        approver: Asks the person.
        cancel: The token the app trips to stop the run.
        tell: Called once with the run's context before the engine starts.
        raises: Where the app puts budgets raised mid-run.

    Returns:
        How the run ended.
    """
    from ioh_tui.demo.home import settle
    from ioh_tui.engine import Parts, Resume, TaskContract, start
    from ioh_tui.store import Store
    from ioh_tui.tui.app_run import run_context

    async with source() as run, Store.open(store_path) as store:
        try:
            request = run.request
            contract: TaskContract
            if isinstance(request, Resume):
                row = await store.run(request.run_id)
                contract = TaskContract.from_dict(row.contract)
            else:
                contract = request.contract
            tell(run_context(contract, run))
            parts = Parts(
                run.provider,
                store,
                policy=run.policy,
                approver=approver,
                sandbox=run.sandbox,
                observers=(observer,),
                cancel=cancel,
                raises=raises,
                mcp=run.mcp,
                hooks=run.hooks,
                fleet=run.fleet,
            )
            result = await start(request, parts)
            # The demo's directory stays while a decision waits on its run; otherwise it goes.
            await asyncio.to_thread(settle, contract.root, result.outcome)
            return result
        finally:
            if run.fleet is not None:  # as `exec --ray`: the cluster is let go of with the run
                await run.fleet.close()
            await run.provider.aclose()

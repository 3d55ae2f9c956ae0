"""The ACP agent: sessions over one store; each prompt a recorded run, like an `exec` run.

A session is a workspace (`cwd`), the MCP servers the client passed, and the runs its prompts
started: one conversation. A prompt is a new run with the prompt's text as goal that carries on
the session's earlier runs (the model reads their prompts, answers and tool results: the
engine's `NewRun.continues`), or, when the session's last run is paused on a deferred decision,
that run continued (the decision is asked again); its events
stream as updates (`updates.py`), its asks become permission requests (`permission.py`).
`session/load` takes a run id (`42` or `run-42`, as `ioh-tui runs` lists them) or a session of
this process, and replays it (`replay.py`).

Just over 400 lines: the protocol's methods share one session table and its run bookkeeping;
what each method needs apart from that table already lives beside it (`session.py`,
`updates.py`, `permission.py`, `replay.py`, `runs.py`, `listing.py`, `options.py`).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import secrets
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, RequestError, update_agent_message_text
from acp.interfaces import Client
from acp.schema import (
    AgentCapabilities,
    ClientCapabilities,
    CloseSessionResponse,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    ResumeSessionResponse,
    SessionCapabilities,
    SessionCloseCapabilities,
    SessionConfigOptionBoolean,
    SessionConfigOptionSelect,
    SessionListCapabilities,
    SessionResumeCapabilities,
    SetSessionConfigOptionResponse,
    StopReason,
    Usage,
)

from ioh_tui import __version__
from ioh_tui.acp.listing import listed_sessions
from ioh_tui.acp.options import chosen_effort, effort_option
from ioh_tui.acp.outbox import Outbox
from ioh_tui.acp.permission import PermissionApprover
from ioh_tui.acp.replay import replayed
from ioh_tui.acp.runs import PromptRun, prompt_run, resumed_run
from ioh_tui.acp.session import (
    AnyMcpServer,
    PromptBlock,
    Session,
    client_servers,
    goal_text,
    refused,
    run_id_of,
)
from ioh_tui.acp.updates import Translator
from ioh_tui.cli.effective import effective_config
from ioh_tui.core import events as ev
from ioh_tui.core.errors import IohError
from ioh_tui.engine import CancelToken, Parts, RunResult, start
from ioh_tui.policy import Policy
from ioh_tui.store import Store
from ioh_tui.store.rows import RunRow

log = logging.getLogger(__name__)

STOP_REASONS: dict[str, StopReason] = {
    "cancelled": "cancelled",
    "step_cap_reached": "max_turn_requests",
    "cost_budget_exceeded": "max_tokens",
}
"""Outcomes with an ACP stop reason of their own; every other outcome ends the turn."""


class IohAgent:
    """The `acp.Agent` of `ioh-tui acp`: every prompt is a run recorded in `store`."""

    def __init__(self, args: argparse.Namespace, store: Store) -> None:
        """Serve runs configured by `args` (the command's flags), recorded in `store`."""
        self._args = args
        self._store = store
        self._sessions: dict[str, Session] = {}
        self._client: Client | None = None
        self._prompts: set[asyncio.Task[RunResult]] = set()
        self._closed: list[Session] = []
        """Sessions closed while their prompt ran."""

    def on_connect(self, conn: Client) -> None:
        """Keep the client's side of the connection (updates and permission requests)."""
        self._client = conn

    @property
    def client(self) -> Client:
        """The connected client."""
        if self._client is None:
            raise RuntimeError("no ACP client is connected")
        return self._client

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: ClientCapabilities | None = None,
        client_info: Implementation | None = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        """What we speak: protocol 1; sessions loaded, listed, resumed, closed; text prompts."""
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(
                load_session=True,
                session_capabilities=SessionCapabilities(
                    list=SessionListCapabilities(),
                    resume=SessionResumeCapabilities(),
                    close=SessionCloseCapabilities(),
                ),
                prompt_capabilities=PromptCapabilities(
                    image=False, audio=False, embedded_context=False
                ),
                mcp_capabilities=McpCapabilities(http=True, sse=True),
            ),
            auth_methods=[],
            agent_info=Implementation(name="ioh-tui", title="ioh-tui", version=__version__),
        )

    def _session(
        self, cwd: str, session_id: str, servers: Sequence[AnyMcpServer] | None
    ) -> Session:
        root = Path(cwd)
        if not root.is_absolute() or not root.is_dir():
            raise refused(f"cwd {cwd} is not an absolute path to a directory")
        session = Session(
            session_id, root, client_servers(servers), Outbox(self.client, session_id)
        )
        self._sessions[session_id] = session
        return session

    async def new_session(
        self,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: Sequence[AnyMcpServer] | None = None,
        **kwargs: Any,
    ) -> NewSessionResponse:
        """A session working in `cwd` (the run's workspace)."""
        session = self._session(cwd, f"session-{secrets.token_hex(8)}", mcp_servers)
        return NewSessionResponse(session_id=session.id, config_options=self._options(session))

    async def load_session(
        self,
        cwd: str,
        session_id: str,
        mcp_servers: Sequence[AnyMcpServer] | None = None,
        additional_directories: list[str] | None = None,
        **kwargs: Any,
    ) -> LoadSessionResponse | None:
        """Replay a stored run (by id) or a session of this process, then go on in it."""
        runs = await self._runs_of(session_id)
        updates = []
        for run in runs:
            try:
                updates.extend(await replayed(self._store, run))
            except IohError as exc:
                raise RequestError.resource_not_found(f"run {run}: {exc}") from None
        session = self._reopened(cwd, session_id, mcp_servers, runs)
        for update in updates:
            session.outbox.put(update)
        await session.outbox.flush()
        return LoadSessionResponse(config_options=self._options(session))

    async def resume_session(
        self,
        session_id: str,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: Sequence[AnyMcpServer] | None = None,
        **kwargs: Any,
    ) -> ResumeSessionResponse:
        """Go on in a stored run's conversation (or this process's session) without a replay."""
        session = self._reopened(cwd, session_id, mcp_servers, await self._runs_of(session_id))
        return ResumeSessionResponse(config_options=self._options(session))

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any
    ) -> ListSessionsResponse:
        """The stored conversations (in `cwd` when given), newest first (`acp/listing.py`)."""
        if cwd is not None and not Path(cwd).is_absolute():
            raise refused(f"cwd {cwd} is not an absolute path")
        return await listed_sessions(self._store, cwd, cursor)

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **kwargs: Any
    ) -> SetSessionConfigOptionResponse:
        """Set the session's reasoning effort (`acp/options.py`); later prompts' runs use it."""
        session = self._sessions.get(session_id)
        if session is None:
            raise refused(f"unknown session {session_id}")
        try:
            session.effort = chosen_effort(config_id, value)
        except ValueError as exc:
            raise RequestError.invalid_params({"message": str(exc)}) from None
        return SetSessionConfigOptionResponse(config_options=self._options(session))

    def _options(
        self, session: Session
    ) -> list[SessionConfigOptionSelect | SessionConfigOptionBoolean]:
        try:
            config = effective_config(self._run_args(session, session.cwd))
            configured = config.get("provider.reasoning_effort")
        except IohError:
            configured = None  # a bad file: said when a prompt's run is built
        return [effort_option(session.effort, configured)]

    def _run_args(self, session: Session, cwd: Path) -> argparse.Namespace:
        """The command's flags for a run of `session` in `cwd`, with the session's choices."""
        chosen = {"reasoning_effort": session.effort} if session.effort else {}
        return argparse.Namespace(**{**vars(self._args), "workspace": str(cwd), **chosen})

    async def close_session(self, session_id: str, **kwargs: Any) -> CloseSessionResponse:
        """Forget a session; a run under way in it is cancelled (and recorded so)."""
        session = self._sessions.pop(session_id, None)
        if session is None:
            raise refused(f"unknown session {session_id}")
        if session.cancel is None:
            await session.outbox.close()
        else:
            # Its prompt answers `cancelled` once the run is recorded; its outbox sends until
            # then, and is closed with the others when the agent stops.
            session.cancel.cancel("the ACP client closed the session")
            self._closed.append(session)
        return CloseSessionResponse()

    async def _runs_of(self, session_id: str) -> list[int]:
        """The runs of a session of this process, or of a stored run's conversation (`run-N`)."""
        known = self._sessions.get(session_id)
        run_id = run_id_of(session_id)
        if known is not None:
            return list(known.runs)
        if run_id is not None:
            return await self._conversation(run_id)
        raise refused(
            f"unknown session {session_id}: a stored run's id is taken (`ioh-tui runs` or "
            "session/list lists them)"
        )

    def _reopened(
        self,
        cwd: str,
        session_id: str,
        servers: Sequence[AnyMcpServer] | None,
        runs: list[int],
    ) -> Session:
        known = self._sessions.get(session_id)
        session = self._session(cwd, session_id, servers)
        session.runs.extend(runs)
        if known is not None:
            # This process's session opened again: what its client chose still holds.
            session.remembered.extend(known.remembered)
            session.effort = known.effort
        return session

    async def _conversation(self, run_id: int) -> list[int]:
        """The runs of stored run `run_id`'s conversation: those it carries on, then itself."""
        try:
            row = await self._store.run(run_id)
        except IohError as exc:
            raise RequestError.resource_not_found(f"run {run_id}: {exc}") from None
        earlier = row.contract.get("continues") or []
        return [*(int(run) for run in earlier), run_id]

    async def prompt(
        self, prompt: Sequence[PromptBlock], session_id: str, **kwargs: Any
    ) -> PromptResponse:
        """One run with the prompt as goal; ends when the run ends (or pauses on a deferral)."""
        session = self._sessions.get(session_id)
        if session is None:
            raise refused(f"unknown session {session_id}")
        if session.cancel is not None:
            raise refused(f"session {session_id} is already running a prompt")
        goal = goal_text(prompt)
        if not goal:
            raise refused("the prompt has no text to take as the goal")
        waiting = await self._waiting(session)
        built = self._built(session, goal, waiting)
        translator = Translator(
            session.cwd if waiting is None else Path(waiting.root),
            # None: a resumed run keeps its stored policy; the built-in tiers still hold for it.
            built.policy or Policy.default(),
        )
        token = CancelToken()
        session.cancel = token

        def observe(event: ev.Event) -> None:
            for update in translator.updates(event):
                session.outbox.put(update)

        parts = Parts(
            built.provider,
            self._store,
            policy=session.policy(built.policy),
            approver=PermissionApprover(
                self.client, session.id, translator, session.outbox.flush, session.remembered
            ),
            sandbox=built.sandbox,
            observers=(observe,),
            cancel=token,
            mcp=built.servers + session.mcp,
            hooks=built.hooks,
        )
        runner = asyncio.ensure_future(start(built.request, parts))
        self._prompts.add(runner)
        try:
            result = await asyncio.shield(runner)
        except asyncio.CancelledError:
            # The connection is closing: the run stops cleanly (`cancelled`) and is recorded.
            token.cancel("the ACP connection closed")
            await runner
            raise
        except IohError as exc:
            raise refused(f"ioh-tui: {exc}") from None
        finally:
            self._prompts.discard(runner)
            session.cancel = None
        if waiting is None:
            session.runs.append(result.run_id)
        return await self._ended(session, translator, result)

    def _built(self, session: Session, goal: str, waiting: RunRow | None) -> PromptRun:
        """The prompt's run: new, or `waiting` continued (its client is told so)."""
        try:
            if waiting is None:
                built = prompt_run(
                    self._run_args(session, session.cwd), goal, session.cwd, tuple(session.runs)
                )
            else:
                built = resumed_run(
                    self._run_args(session, Path(waiting.root)), waiting.id, waiting.contract
                )
        except IohError as exc:
            raise refused(f"ioh-tui: {exc}") from None
        for line in built.left_out:
            log.warning("ioh-tui: %s", line)
        if waiting is not None:
            session.outbox.put(
                update_agent_message_text(
                    f"(run {waiting.id} waits on a deferred decision: it is asked again, and the "
                    "run goes on; this prompt's text is not used)\n\n"
                )
            )
        return built

    async def _waiting(self, session: Session) -> RunRow | None:
        """The session's last run when it is paused on a deferred decision (else None)."""
        if not session.runs:
            return None
        try:
            row = await self._store.run(session.runs[-1])
        except IohError:
            return None
        return row if row.outcome == "awaiting_approval" else None

    async def _ended(
        self, session: Session, translator: Translator, result: RunResult
    ) -> PromptResponse:
        detail = f": {result.detail}" if result.detail else ""
        steps = f"{result.steps} step" + ("" if result.steps == 1 else "s")
        said = f"\n\n(run {result.run_id} {result.outcome} after {steps}{detail})"
        if result.outcome == "awaiting_approval":
            said += (
                f"\nAnswer the deferred decision with `ioh-tui resume {result.run_id} --decide "
                "approve|deny`, or in the app's queue."
            )
        session.outbox.put(update_agent_message_text(said))
        await session.outbox.flush()
        return PromptResponse(
            stop_reason=STOP_REASONS.get(result.outcome, "end_turn"),
            usage=Usage(
                total_tokens=result.tokens,
                input_tokens=translator.input_tokens,
                output_tokens=translator.output_tokens,
            ),
            field_meta={
                "ioh-tui": {
                    "runId": result.run_id,
                    "outcome": result.outcome,
                    "steps": result.steps,
                    "tokens": result.tokens,
                }
            },
        )

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        """Stop the session's run: it ends `cancelled` and its prompt says so."""
        session = self._sessions.get(session_id)
        if session is not None and session.cancel is not None:
            session.cancel.cancel("cancelled by the ACP client")

    async def stop_all(self) -> None:
        """Cancel every run under way and wait until each is recorded (SIGTERM, end of input)."""
        for session in self._sessions.values():
            if session.cancel is not None:
                session.cancel.cancel("ioh-tui acp is stopping")
        if self._prompts:
            await asyncio.gather(*self._prompts, return_exceptions=True)
        for session in [*self._sessions.values(), *self._closed]:
            await session.outbox.close()

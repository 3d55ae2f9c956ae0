"""What crosses the network between a child on a node and the root that owns the store."""

from __future__ import annotations

import pickle
from dataclasses import dataclass, field
from typing import Any

from ioh_tui.core.control import Stop
from ioh_tui.core.events import Event
from ioh_tui.core.transcript import Message


@dataclass(frozen=True, slots=True)
class Request:
    """One call from a child to the root: its store, approver or tree.

    `seq` orders one child's requests (Ray does not keep the order of an async actor's calls);
    `epoch` names the actor driving the child, so a replaced actor's late calls are refused.
    `events` were emitted before the call, and are delivered before it runs.
    """

    child: int
    epoch: int
    seq: int
    op: str
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)
    events: tuple[Event, ...] = ()


@dataclass(frozen=True, slots=True)
class Reply:
    """The root's answer, with the tree's news: its halt reason and the child's new reports."""

    value: Any = None
    error: BaseException | None = None
    halt: str | None = None
    reports: tuple[Message, ...] = ()


class Stale(Exception):
    """A call from an actor that is no longer the child's (it was replaced after a fault)."""


def portable(exc: BaseException) -> BaseException:
    """`exc`, or a stand-in that survives pickling (a `Stop` keeps its outcome and detail)."""
    if isinstance(exc, Stop):
        return _StopCarrier(exc.outcome, exc.steps, exc.detail, exc.request_id)
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:
        return RuntimeError(f"{type(exc).__name__}: {exc}")
    return exc


def restored(exc: BaseException) -> BaseException:
    """The exception to raise on the child's side."""
    if isinstance(exc, _StopCarrier):
        outcome, steps, detail, request_id = exc.args
        return Stop(outcome, steps, detail, request_id=request_id)
    return exc


class _StopCarrier(Exception):
    """A `Stop` in transit (its constructor takes more than its message)."""

"""What a tool is, what it gets to work with, and what it returns."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from ioh_tui.core.acts import Act, Effect
from ioh_tui.core.transcript import Image, ToolSpec
from ioh_tui.sandbox.base import ExecResult, Sandbox
from ioh_tui.toolchain import Toolchain
from ioh_tui.tools.vision import Vision
from ioh_tui.tools.workspace import Workspace

DEFAULT_ENTRY_CAP = 12_000
"""Characters of one observation the model is shown (the original's default entry cap)."""


@dataclass(frozen=True, slots=True)
class Permit:
    """The decider let the act through, possibly rewritten by the person who approved it."""

    target: str
    content: str | None = None
    note: str = ""
    """Said to the model alongside the result (e.g. that the action was rewritten)."""


@dataclass(frozen=True, slots=True)
class Refusal:
    """The decider refused (policy deny, or a person denied); the observation says why."""

    observation: str
    denied_by_person: bool = False


@dataclass(frozen=True, slots=True)
class Deferral:
    """A person parked the decision; the run pauses."""

    request_id: int


Answer = Permit | Refusal | Deferral


class Decider(Protocol):
    """The policy check (and, on `ask`, the approval) every act goes through."""

    async def __call__(
        self,
        act: Act,
        target: str,
        *,
        content: str | None = None,
        preview: str | None = None,
        also: tuple[str, ...] = (),
    ) -> Answer:
        """Decide one act on `target` (and on each of `also`: the stricter verdict wins)."""
        ...


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What a tool call produced."""

    output: str
    """What the model reads (already capped)."""
    ok: bool = True
    refused: bool = False
    changed: bool = False
    """The workspace changed (counts as progress)."""
    deferred: int | None = None
    """The request id when a person deferred the decision (the run pauses)."""
    meta: Mapping[str, Any] = field(default_factory=dict)
    ran: ExecResult | None = None
    """The sandboxed command the call ran, if any (the engine adds it to the run's trace)."""
    images: tuple[Image, ...] = ()
    """Images shown to the model with the output (`view_image`, an MCP tool's images)."""

    @property
    def summary(self) -> str:
        """The first line of the output."""
        return self.output.split("\n", 1)[0][:200]


@dataclass(slots=True)
class ToolContext:
    """Everything a tool may use: the confined workspace, the decider, the sandbox, the caps."""

    workspace: Workspace
    decide: Decider
    visible: Callable[[str], bool]
    """Whether a relative path may be shown by grep/find/list_dir (not denied for reading)."""
    sandbox: Sandbox
    exec_timeout_s: float = 900.0
    entry_cap: int = DEFAULT_ENTRY_CAP
    subject: str | None = None
    """Single-file mode: the one relative path the run may read and write."""
    on_output: Callable[[str], None] | None = None
    journal: Callable[[dict[str, Any]], Awaitable[None]] | None = None
    """Records what an effect is about to do, just before it happens (see `engine/recovery.py`)."""
    toolchain: Toolchain | None = None
    """The run's detected project (None: none, or single-file mode); checked after edits."""
    net: Callable[[str], NetVerdict] | None = None
    """What the policy says of giving a command line the network, before anyone is asked
    (None: never; commands run with the network denied)."""
    readable: Callable[[str], bool] | None = None
    """Whether grep may show a file's content without asking (its read is allowed, not `ask`);
    None: as `visible`."""
    deadline: float | None = None
    """The `time.monotonic()` instant the run's time budget runs out (None: no time budget)."""
    vision: Vision | None = None
    """The limits within which the run's model takes images (None: it takes none)."""
    model: str | None = None
    """The run's model, as observations name it."""
    hard_links: Callable[[Act, str], bool] | None = None
    """Whether a regular file with other names (hard links) may be read or written as this path:
    the policy cannot check its other names, so only when it could refuse no name for the act or
    an allow rule names this one exactly. None: never."""

    def linked(self, act: Act, rel: str, names: int, verb: str) -> ToolResult | None:
        """The refusal for a file with `names` names (hard links) reached as `rel`, or None."""
        if names <= 1 or (self.hard_links is not None and self.hard_links(act, rel)):
            return None
        return ToolResult(
            f"[{verb} {rel} refused] {rel} has {names} names (hard links); the policy cannot check "
            f"the others, so file tools do not {act.value} it unless a rule allowing "
            f"{act.value} names {rel} exactly.",
            ok=False,
            refused=True,
        )

    def wall_s(self, asked: float | None = None) -> float:
        """A command's wall-clock limit: what it asked, at most the exec timeout and the time left.

        0 when the run's time budget is spent: the command must not start.
        """
        wall = min(asked, self.exec_timeout_s) if asked else self.exec_timeout_s
        if self.deadline is not None:
            wall = min(wall, self.deadline - time.monotonic())
        return max(0.0, wall)


@dataclass(frozen=True, slots=True)
class NetVerdict:
    """The `net` act's verdict on a command line: its effect and the rule that decided it."""

    effect: Effect
    rule: str | None = None
    layer: str | None = None


ToolFn = Callable[[Mapping[str, Any], ToolContext], Awaitable[ToolResult]]


@dataclass(frozen=True, slots=True)
class Asked:
    """An act as the decider is asked about it: what a cut call's resume puts to the operator."""

    act: Act
    target: str
    content: str | None = None


CutAsk = Callable[[Mapping[str, Any]], Asked]
"""A call's arguments to the act it asks for, the same act and target its tool decides."""


@dataclass(frozen=True, slots=True)
class Tool:
    """A model-facing tool: its spec and its implementation."""

    spec: ToolSpec
    run: ToolFn
    mutating: bool = False
    """Its effect must not be repeated after a crash (journalled)."""
    cut_ask: CutAsk | None = None
    """For a call a crash can cut with its effect unknown (a command, an MCP server's tool):
    what a resume asks the operator, instead of making the call again. None: a cut call is made
    again (its effect was journalled as an intent before it began, or bears repeating)."""


def cap(text: str, limit: int, *, keep: str = "head") -> str:
    """Bound `text` to `limit` characters with a visible marker saying what was left out.

    `keep` is `head`, `tail`, or `both` (head and tail around the marker).
    """
    if len(text) <= limit:
        return text
    elided = len(text) - limit
    marker = f"\n[... {elided:,} of {len(text):,} characters elided ...]\n"
    if keep == "tail":
        return marker.lstrip("\n") + text[-limit:]
    if keep == "both":
        half = limit // 2
        return text[:half] + marker + text[-(limit - half) :]
    return text[:limit] + marker.rstrip("\n")


class ArgumentError(Exception):
    """A tool was called with arguments it cannot use; the message is for the model."""


def arg_str(
    args: Mapping[str, Any],
    name: str,
    *,
    required: bool = True,
    default: str = "",
    text: bool = False,
) -> str:
    """A string argument: valid Unicode, and (unless `text`, file content) without NUL bytes.

    A path, pattern or argv word with a NUL byte cannot name anything, and a lone surrogate
    cannot be written anywhere: both are the model's mistake, said back to it.
    """
    value = args.get(name)
    if value is None:
        if required:
            raise ArgumentError(f"missing required argument {name!r}")
        return default
    if not isinstance(value, str):
        raise ArgumentError(f"argument {name!r} must be a string")
    check_text(name, value, nul=text)
    return value


def check_text(name: str, value: str, *, nul: bool = False) -> None:
    """Refuse a lone surrogate (always) and a NUL byte (unless `nul`) in an argument.

    Raises:
        ArgumentError: naming the argument and what is wrong with it.
    """
    if not nul and "\x00" in value:
        raise ArgumentError(f"argument {name!r} holds a NUL byte (\\x00), which no path may hold")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        code = ord(value[exc.start])
        raise ArgumentError(
            f"argument {name!r} holds a lone surrogate (U+{code:04X} at {exc.start}), "
            "which is not valid Unicode text"
        ) from None


def arg_int(args: Mapping[str, Any], name: str) -> int | None:
    """An optional positive integer argument."""
    value = args.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ArgumentError(f"argument {name!r} must be a positive integer")
    return value


def arg_bool(args: Mapping[str, Any], name: str, default: bool = False) -> bool:
    """An optional boolean argument."""
    value = args.get(name, default)
    if not isinstance(value, bool):
        raise ArgumentError(f"argument {name!r} must be true or false")
    return value

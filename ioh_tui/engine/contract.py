"""TaskContract (goal, subject, criterion, budgets), its TOML form, and RunResult.

Over 400 lines because the contract's TOML form and its value checks live beside the type;
the TOML loading (`load_contract_file` and its helpers) is the part to move out next.
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from ioh_tui.core.acts import Act
from ioh_tui.core.errors import ConfigError
from ioh_tui.core.outcomes import OUTCOMES as OUTCOMES
from ioh_tui.core.outcomes import Outcome
from ioh_tui.policy.toml import parse_data, render_toml
from ioh_tui.verification import Command, Criterion, NoGate, criterion_from_dict
from ioh_tui.verification.codec import (
    GATE_KEYS,
    criterion_from_toml,
    gate_limits,
    gate_limits_dict,
    with_gate_limits,
)

Mode = Literal["single_file", "workspace"]

EXIT_STATUS: dict[Outcome, int] = {
    "success": 0,
    "finished": 0,
    "stalled": 1,
    "cancelled": 1,
    "failed": 1,
    "step_cap_reached": 3,
    "time_budget_exceeded": 3,
    "cost_budget_exceeded": 3,
    "awaiting_approval": 4,
}
TERMINAL: frozenset[Outcome] = frozenset({"success", "finished", "stalled", "cancelled", "failed"})
"""Outcomes a resume reports without driving; budget stops are re-driven (raise it, resume)."""


@dataclass(frozen=True, slots=True)
class TaskContract:
    """What a run must achieve and within which budgets."""

    goal: str
    mode: Mode
    root: Path
    subject: str | None = None
    """Single-file mode: the one file (relative to `root`) the run edits."""
    verification: Criterion = field(default_factory=NoGate)
    max_steps: int = 12
    time_budget_s: float | None = None
    token_budget: int | None = None
    max_retries: int = 10
    """Retries of one model call (the wait between them is `providers.retry.RetryPolicy`'s):
    10 outlasts an outage of about 1.5 to 3 minutes, within the time budget (docs/long-runs.md)."""
    exec_timeout_s: float = 900.0
    constraints: tuple[str, ...] = ()
    stall_after: int = 5
    """Repeated or no-progress steps in a row that make a stall (0: never)."""
    context_window: int | None = None
    """The model's context window in tokens (None: the shipped table's, by model name)."""

    @classmethod
    def single_file(cls, goal: str, path: str | Path, verification: Criterion) -> TaskContract:
        """A run that edits one file; `path` is the file (its directory becomes the root)."""
        file = Path(path).resolve()
        return cls(goal, "single_file", file.parent, file.name, verification, max_steps=8)

    @classmethod
    def workspace(
        cls, goal: str, root: str | Path, verification: Criterion | None = None
    ) -> TaskContract:
        """A run over a whole directory with the full tool set."""
        return cls(goal, "workspace", Path(root).resolve(), None, verification or NoGate())

    def with_max_steps(self, n: int) -> TaskContract:
        """A copy with a step cap."""
        return replace(self, max_steps=_positive(n, "max_steps"))

    def with_time_budget(self, seconds: float) -> TaskContract:
        """A copy with a wall-clock budget (measured from the run's start, across restarts)."""
        return replace(self, time_budget_s=float(_positive(seconds, "time_budget")))

    def with_token_budget(self, tokens: int) -> TaskContract:
        """A copy with a total-token budget."""
        return replace(self, token_budget=_positive(tokens, "token_budget"))

    def with_max_retries(self, n: int) -> TaskContract:
        """A copy with a provider retry count."""
        if n < 0:
            raise ConfigError("max_retries must be >= 0")
        return replace(self, max_retries=n)

    def with_stall_after(self, n: int) -> TaskContract:
        """A copy whose run stalls after `n` repeated or no-progress steps (0: never)."""
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise ConfigError(f"stall_after must be a whole number >= 0, not {n!r}")
        return replace(self, stall_after=n)

    def with_context_window(self, tokens: int) -> TaskContract:
        """A copy working within a context window of `tokens` (overrides the shipped table)."""
        return replace(self, context_window=int(_positive(tokens, "context_window")))

    def for_child(
        self,
        goal: str,
        *,
        max_steps: int,
        token_budget: int | None,
        time_left_s: float | None,
        tokens_left: int | None,
    ) -> TaskContract:
        """The contract of a sub-agent this run spawns: it never gets more than its parent has.

        Its step cap is at most the parent's; its time budget is what is left of the parent's
        (`time_left_s`, measured when it is spawned; none when the parent has none); its token
        budget is what it asked, at most what the parent has left (`tokens_left`), and that left
        when it asked for none. The exec timeout, retries, stall detection, context window and
        constraints are the parent's. A child works over the parent's root with no criterion.
        """
        child = replace(
            TaskContract.workspace(goal, self.root, NoGate()),
            exec_timeout_s=self.exec_timeout_s,
            max_retries=self.max_retries,
            stall_after=self.stall_after,
            context_window=self.context_window,
            constraints=self.constraints,
        ).with_max_steps(min(max_steps, self.max_steps))
        if time_left_s is not None:
            child = child.with_time_budget(time_left_s)
        tokens = [t for t in (token_budget, tokens_left) if t is not None]
        return child.with_token_budget(min(tokens)) if tokens else child

    def budgets(self) -> dict[str, Any]:
        """The budgets, as reported in `run_started`."""
        return {
            "max_steps": self.max_steps,
            "time_budget_s": self.time_budget_s,
            "token_budget": self.token_budget,
            "max_retries": self.max_retries,
            "stall_after": self.stall_after,
        }

    def to_dict(self) -> dict[str, Any]:
        """JSON form, stored with the run so a resume can rebuild it (the gate's caps too)."""
        limits = gate_limits(self.verification)
        gate = {} if limits is None else {"gate": gate_limits_dict(limits)}
        return {
            **gate,
            "goal": self.goal,
            "mode": self.mode,
            "root": str(self.root),
            "subject": self.subject,
            "verification": self.verification.to_dict(),
            "constraints": list(self.constraints),
            "exec_timeout_s": self.exec_timeout_s,
            "context_window": self.context_window,
            **self.budgets(),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TaskContract:
        """Rebuild from `to_dict`'s form.

        Raises:
            ConfigError: `data` is not a contract (a damaged or hand-edited store), or holds a
                budget that is NaN or infinite (it could never be reached).
        """
        try:
            contract = cls._from_dict(data)
        except (KeyError, TypeError, ValueError, AttributeError, OverflowError) as exc:
            what = f"missing {exc.args[0]!r}" if isinstance(exc, KeyError) else str(exc)
            raise ConfigError(f"the stored contract is not a task contract: {what}") from None
        for key in sorted(_BUDGETS):
            value = getattr(contract, key)
            if isinstance(value, float) and not math.isfinite(value):
                raise ConfigError(f"the stored contract's {key} is {value!r}: not a budget")
        return contract

    @classmethod
    def _from_dict(cls, data: dict[str, Any]) -> TaskContract:
        return cls(
            goal=data["goal"],
            mode=data["mode"],
            root=Path(data["root"]),
            subject=data.get("subject"),
            verification=with_gate_limits(
                criterion_from_dict(data["verification"]), data.get("gate") or {}
            ),
            max_steps=int(data["max_steps"]),
            time_budget_s=data.get("time_budget_s"),
            token_budget=data.get("token_budget"),
            max_retries=int(data.get("max_retries", 2)),
            exec_timeout_s=float(data.get("exec_timeout_s", 900.0)),
            constraints=tuple(data.get("constraints", ())),
            # Runs stored before stall detection existed keep running without it.
            stall_after=int(data.get("stall_after", 0)),
            context_window=data.get("context_window"),
        )


def _positive(value: Any, name: str) -> Any:
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise ConfigError(f"{name} must be a positive number, not {value!r}")
    return value


@dataclass(frozen=True, slots=True)
class RunResult:
    """How a run ended."""

    outcome: Outcome
    run_id: int
    steps: int
    tokens: int
    detail: str = ""
    remembered: tuple[str, ...] = ()
    """Rules an approver asked to keep during the run (`act effect pattern`)."""
    request_id: int | None = None
    """The pending request when the outcome is `awaiting_approval`."""

    @property
    def exit_status(self) -> int:
        """The documented exit status of a headless command for this outcome."""
        return EXIT_STATUS[self.outcome]


@dataclass(frozen=True, slots=True)
class ContractFile:
    """A parsed `--contract` TOML file: the contract's fields, and an optional policy table."""

    fields: dict[str, Any]
    policy_toml: str | None


_TOP = {
    "goal",
    "mode",
    "workspace",
    "file",
    "verification",
    "gate",
    "budgets",
    "constraints",
    "policy",
}
_BUDGETS = {
    "max_steps",
    "time_budget_s",
    "token_budget",
    "max_retries",
    "exec_timeout_s",
    "stall_after",
    "context_window",
}


def load_contract_file(path: str | Path) -> ContractFile:
    """Read a TOML task contract; `ConfigError` naming the bad key or value."""
    data = _read_toml(path)
    _known(data, _TOP, f"contract {path}")
    fields: dict[str, Any] = {}
    for key in ("goal", "mode", "workspace", "file"):
        if key in data:
            fields[key] = _typed(data[key], str, f"{key}")
    if fields.get("mode", "workspace") not in ("workspace", "single_file"):
        raise ConfigError(f"contract {path}: mode must be 'workspace' or 'single_file'")
    if "constraints" in data:
        value = data["constraints"]
        if not isinstance(value, list) or not all(isinstance(c, str) for c in value):
            raise ConfigError(f"contract {path}: constraints must be a list of strings")
        fields["constraints"] = tuple(value)
    fields.update(_budgets(data.get("budgets", {}), f"contract {path}"))
    if "verification" in data:
        fields["verification"] = _verification(
            data["verification"], f"contract {path}: [verification]"
        )
    if "gate" in data:
        fields["gate"] = gate_caps(data["gate"], f"contract {path}: [gate]")
    return ContractFile(fields, _policy_toml(data, path) if "policy" in data else None)


def _read_toml(path: str | Path) -> dict[str, Any]:
    try:
        return tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"cannot read contract {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"contract {path} is not UTF-8 text ({exc.reason})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"contract {path} is not valid TOML: {exc}") from None
    except RecursionError:
        raise ConfigError(f"contract {path} is nested too deeply") from None


def _policy_toml(data: dict[str, Any], path: str | Path) -> str:
    """The contract's policy as a TOML document of its own.

    Taken from the table TOML parsed (a `[policy]` table, an inline table or dotted keys alike),
    never from the file's lines, and checked here so a bad rule names the contract file. Only the
    defaults the contract names are written: an act it leaves out keeps what the files below it
    say (`cli/options.build_policy`).
    """
    try:
        layers, defaults = parse_data(data["policy"], "policy")
    except ConfigError as exc:
        raise ConfigError(f"contract {path}: {exc}") from None
    named = data["policy"].get("defaults", {})
    return render_toml(layers, defaults, [act for act in Act if act.value in named])


def _budgets(budgets: Any, where: str) -> dict[str, Any]:
    _known(budgets, _BUDGETS, f"{where}: [budgets]")
    return {
        key: check_budget(key, value, f"{where}: budgets.{key}") for key, value in budgets.items()
    }


def _verification(data: Any, where: str) -> Criterion:
    if not isinstance(data, dict):
        raise ConfigError(f"{where} must be a table")
    criterion = criterion_from_toml(data, where)
    if isinstance(criterion, Command) and not 0 <= criterion.expect_exit <= 255:
        raise ConfigError(
            f"{where}: expect_exit must be an exit status (0-255), not {criterion.expect_exit!r}"
        )
    return criterion


def gate_caps(data: Any, where: str) -> dict[str, float | int]:
    """A `[gate]` table's caps: `timeout_s`, `cpu_s` (seconds), `memory_mb`, each positive."""
    _known(data, set(GATE_KEYS), where)
    caps: dict[str, float | int] = {}
    for key, value in data.items():
        whole = key == "memory_mb"
        kind_ok = isinstance(value, int) if whole else isinstance(value, int | float)
        if isinstance(value, bool) or not kind_ok or not math.isfinite(value) or value <= 0:
            wanted = "a whole number > 0" if whole else "a number of seconds > 0"
            raise ConfigError(f"{where}: {key} must be {wanted}, not {value!r}")
        caps[key] = value
    return caps


def _known(data: Any, allowed: set[str], where: str) -> None:
    if not isinstance(data, dict):
        raise ConfigError(f"{where} must be a table")
    unknown = sorted(set(data) - allowed)
    if unknown:
        raise ConfigError(
            f"{where}: unknown key {unknown[0]!r} (allowed: {', '.join(sorted(allowed))})"
        )


def _typed(value: Any, kind: type, name: str) -> Any:
    if not isinstance(value, kind):
        raise ConfigError(f"contract: {name} must be a {kind.__name__}")
    return value


_WHOLE = {"max_steps", "token_budget", "max_retries", "stall_after", "context_window"}
"""Budgets counted in whole numbers; the others (seconds) may be fractional."""
_MAY_BE_ZERO = {"max_retries", "stall_after"}
"""Budgets where 0 means something (no retry; never stall); the others must be positive."""


def check_budget(key: str, value: Any, where: str) -> Any:
    """A budget's value if it can bound a run; `ConfigError` naming `where` otherwise.

    NaN and the infinities are refused: NaN compares false with everything, so a budget of NaN
    would never be reached, and an infinite one is no budget. A cap of 0 (`max_steps`,
    `exec_timeout_s`) would stop every run before it starts.

    Args:
        key: the budget's name (a key of `[budgets]`).
        value: its value.
        where: how to name it in the message.
    """
    floor = ">= 0" if key in _MAY_BE_ZERO else "> 0"
    wanted = f"{'an integer' if key in _WHOLE else 'a finite number'} {floor}"
    number = not isinstance(value, bool) and isinstance(value, int | float)
    if (
        not number
        or not math.isfinite(value)
        or (key in _WHOLE and not isinstance(value, int))
        or value < 0
        or (value == 0 and key not in _MAY_BE_ZERO)
    ):
        raise ConfigError(f"{where} must be {wanted}, not {value!r}")
    return value


def check_contract(contract: TaskContract) -> None:
    """Refuse a contract that cannot run, before anything is recorded."""
    if not contract.goal.strip():
        raise ConfigError("the goal is empty")
    for key in sorted(_BUDGETS):
        value = getattr(contract, key)
        if value is not None:
            check_budget(key, value, key)
    if not contract.root.is_dir():
        raise ConfigError(f"workspace {contract.root} does not exist or is not a directory")
    single = contract.verification.single_file
    if contract.mode == "workspace" and single is True:
        raise ConfigError(
            f"{type(contract.verification).__name__} checks one file: use single-file mode (--file)"
        )
    if contract.mode == "single_file" and single is False:
        raise ConfigError(f"{type(contract.verification).__name__} is a workspace criterion")
    gate = contract.verification
    if isinstance(gate, Command):
        cwd = (contract.root / contract.subject).parent if contract.subject else contract.root
        if (why := gate.missing(cwd)) is not None:
            raise ConfigError(why)

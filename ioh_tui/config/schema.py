"""Every configuration key: its type, its default, its flag and the variables that can set it.

One table (`KEYS`) drives validation, precedence, `ioh-tui config` and docs/configuration.md, so
a key cannot be accepted in one place and forgotten in another. Each key may also be set by
`IOH_TUI_<SECTION>_<KEY>` (e.g. `IOH_TUI_BUDGETS_MAX_STEPS`); a few keep the variable they always
had (`IOH_TUI_NOTIFY`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ioh_tui.core.transcript import EFFORTS

PROVIDERS = ("openrouter", "anthropic", "openai", "compatible", "scripted")
SANDBOXES = ("auto", "bwrap", "namespaces", "floor", "none")
NOTIFY_STYLES = ("osc9", "osc777")

ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
_SECRET_SHAPES = re.compile(
    r"^(sk-|sk_|rk_|pk_|ghp_|gho_|ghs_|github_pat_|glpat-|xox[abposr]-|AKIA|AIza|hf_|"
    r"eyJ[A-Za-z0-9_-]{10,}\.)"
)
"""Prefixes of well-known key formats (OpenAI, Anthropic, Stripe, GitHub, GitLab, Slack, AWS,
Google, Hugging Face, JWTs)."""


def looks_secret(value: str) -> bool:
    """Whether `value` looks like a credential rather than a name or a path.

    A known key prefix, or a long unbroken run of letters and digits mixing cases and digits (a
    variable name is upper case with underscores; a path has separators).
    """
    if _SECRET_SHAPES.match(value):
        return True
    if len(value) >= 24 and re.fullmatch(r"[A-Za-z0-9_\-+/=.]+", value) and "/" not in value:
        kinds = sum(bool(re.search(pattern, value)) for pattern in ("[a-z]", "[A-Z]", "[0-9]"))
        return kinds == 3
    return False


class Invalid(ValueError):
    """A value a key does not accept; the message is the reason, in the user's words."""


def _int(minimum: int) -> Callable[[Any], int]:
    def check(value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise Invalid(f"must be a whole number >= {minimum}, not {value!r}")
        if value < minimum:
            raise Invalid(f"must be a whole number >= {minimum}, not {value!r}")
        return value

    return check


def _seconds(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise Invalid(f"must be a number of seconds > 0, not {value!r}")
    if not math.isfinite(value) or value <= 0:
        raise Invalid(f"must be a number of seconds > 0, not {value!r}")
    return float(value)


def _text(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise Invalid(f"must be a non-empty string, not {value!r}")
    return value


def _choice(choices: tuple[str, ...]) -> Callable[[Any], str]:
    def check(value: Any) -> str:
        if value not in choices:
            raise Invalid(f"must be one of {', '.join(choices)}, not {value!r}")
        return str(value)

    return check


def _notify(value: Any) -> str:
    """As the app reads `IOH_TUI_NOTIFY`: case and surrounding spaces do not matter."""
    style = value.strip().lower() if isinstance(value, str) else value
    if style not in NOTIFY_STYLES:
        raise Invalid(f"use {' or '.join(NOTIFY_STYLES)} (or leave it unset)")
    return str(style)


def env_name(value: Any) -> str:
    """A variable's name (never its value: a key-shaped value is refused as a leak)."""
    if not isinstance(value, str):
        raise Invalid(f"must be the name of an environment variable, not {value!r}")
    if looks_secret(value):
        raise Invalid(
            "holds what looks like a key itself: write the NAME of the variable that holds it"
        )
    if not ENV_NAME.match(value):
        raise Invalid(f"must be the name of an environment variable (A-Z, 0-9, _), not {value!r}")
    return value


_USER_NAME = re.compile(r"^[a-z_][a-z0-9_-]{0,31}\$?$")


def _root_user(value: Any) -> str:
    """`auto`, `root`, a uid, or a user's name (whether it exists is asked when a command runs)."""
    text = value.strip() if isinstance(value, str) else value
    if not isinstance(text, str) or not (text.isdigit() or _USER_NAME.match(text)):
        raise Invalid(f"use auto, root, a user name or a uid, not {value!r}")
    return text


def _fallback(value: Any) -> str:
    text = _text(value)
    name = text.partition(":")[0]
    if name not in PROVIDERS:
        raise Invalid(f"must be PROVIDER[:MODEL] with PROVIDER one of {', '.join(PROVIDERS)}")
    return text


@dataclass(frozen=True, slots=True)
class Key:
    """One configuration key."""

    path: str
    """`section.key`, as written in the file."""
    check: Callable[[Any], Any]
    """Validates a value read from a file (TOML-typed) and returns it normalised."""
    default: Any
    """The value when nothing sets it (None: the built-in behaviour `default_text` describes)."""
    flag: str | None = None
    """The command-line option that sets it."""
    dest: str | None = None
    """The option's attribute on the parsed arguments."""
    env: tuple[str, ...] = ()
    """Variables that set it besides `IOH_TUI_<SECTION>_<KEY>` (first set wins)."""
    default_text: str = ""
    """The default in words, when `default` is None."""
    relative: bool = False
    """A path: relative to the file naming it (a flag's or variable's: to the working directory)."""
    help: str = ""

    @property
    def section(self) -> str:
        """The table the key lives in."""
        return self.path.split(".", 1)[0]

    @property
    def name(self) -> str:
        """The key within its table."""
        return self.path.split(".", 1)[1]

    @property
    def env_names(self) -> tuple[str, ...]:
        """Every variable that sets the key, in the order they are read."""
        generic = "IOH_TUI_" + self.path.replace(".", "_").upper()
        return (generic, *self.env)


PROVIDER_KEYS: tuple[Key, ...] = (
    Key(
        "provider.name",
        _choice(PROVIDERS),
        None,
        "--provider",
        "provider",
        default_text="the first of OPENROUTER_API_KEY, ANTHROPIC_API_KEY, OPENAI_API_KEY set",
        help="model back-end",
    ),
    Key(
        "provider.model",
        _text,
        None,
        "--model",
        "model",
        default_text="the provider's *_MODEL variable (no model is guessed)",
        help="model slug",
    ),
    Key(
        "provider.base_url",
        _text,
        None,
        "--base-url",
        "base_url",
        default_text="the provider's own (compatible: OPENAI_BASE_URL)",
        help="endpoint (compatible; an override for the others)",
    ),
    Key(
        "provider.api_key_env",
        env_name,
        None,
        "--api-key-env",
        "api_key_env",
        default_text="the provider's own (OPENROUTER_API_KEY, ANTHROPIC_API_KEY, OPENAI_API_KEY)",
        help="the NAME of the variable holding the key",
    ),
    Key(
        "provider.fallback",
        _fallback,
        None,
        "--fallback",
        "fallback",
        default_text="none",
        help="PROVIDER[:MODEL] taken when the first one's retries are spent",
    ),
    Key(
        "provider.reasoning_effort",
        _choice(EFFORTS),
        None,
        "--reasoning-effort",
        "reasoning_effort",
        default_text="the model's own (Anthropic: no extended thinking)",
        help="how hard a model that reasons thinks: low, medium or high",
    ),
)
"""The keys a `[profiles.NAME]` table may hold too (as `name`, `model`, ...)."""

KEYS: tuple[Key, ...] = (
    *PROVIDER_KEYS,
    Key(
        "pricing.file",
        _text,
        None,
        relative=True,
        default_text="the shipped table only",
        help="a TOML price table extending the shipped one",
    ),
    Key(
        "budgets.max_steps",
        _int(1),
        None,
        "--max-steps",
        "max_steps",
        default_text="12 (8 in single-file mode)",
        help="steps before step_cap_reached",
    ),
    Key(
        "budgets.time_budget_s",
        _seconds,
        None,
        "--time-budget",
        "time_budget",
        default_text="none",
        help="wall-clock seconds for the whole run",
    ),
    Key(
        "budgets.token_budget",
        _int(1),
        None,
        "--token-budget",
        "token_budget",
        default_text="none",
        help="total tokens for the run",
    ),
    Key(
        "budgets.max_retries",
        _int(0),
        10,
        "--max-retries",
        "max_retries",
        help="retries of one model call",
    ),
    Key(
        "budgets.stall_after",
        _int(0),
        5,
        "--stall-after",
        "stall_after",
        help="repeated or idle steps in a row that end the run stalled (0: never)",
    ),
    Key(
        "budgets.exec_timeout_s",
        _seconds,
        900.0,
        help="the default wall clock of the agent's exec tool",
    ),
    Key(
        "gate.timeout_s",
        _seconds,
        120.0,
        "--gate-timeout",
        "gate_timeout",
        help="the gate's wall-clock cap per command",
    ),
    Key("gate.cpu_s", _seconds, 60.0, "--gate-cpu", "gate_cpu", help="the gate's CPU cap"),
    Key(
        "gate.memory_mb",
        _int(1),
        2048,
        "--gate-memory",
        "gate_memory",
        help="the gate's memory cap (MB)",
    ),
    Key(
        "context.window",
        _int(1),
        None,
        "--context-window",
        "context_window",
        default_text="the shipped table's, by model name",
        help="the model's context window",
    ),
    Key(
        "sandbox.backend",
        _choice(SANDBOXES),
        "auto",
        "--sandbox",
        "sandbox",
        help="containment for commands",
    ),
    Key(
        "sandbox.root_user",
        _root_user,
        "auto",
        help="who commands run as when the harness runs as root (auto, root, a name or a uid)",
    ),
    Key(
        "store.path",
        _text,
        None,
        "--store",
        "store",
        relative=True,
        default_text="store.db in $IOH_TUI_HOME, else $XDG_DATA_HOME/ioh-tui",
        help="the SQLite store",
    ),
    Key(
        "notifications.style",
        _notify,
        None,
        env=("IOH_TUI_NOTIFY",),
        default_text="off",
        help="desktop notifications in the app (osc9 or osc777)",
    ),
)
"""Every scalar key, in the order `ioh-tui config` prints them."""

BY_PATH: dict[str, Key] = {key.path: key for key in KEYS}

FREE_SECTIONS = ("policy", "mcp", "hooks", "profiles")
"""Sections with a shape of their own (checked by `shapes`), not scalar keys."""

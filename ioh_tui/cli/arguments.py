"""Every option as argparse reads it: the parser's pieces, which import nothing but the stdlib.

`--help` builds every subcommand's parser, so what builds one must not load the engine, the
providers or MCP (`tests/unit/cli/test_arguments.py`). What an option's value becomes (a
contract, a provider, a policy) is `cli/options.py`'s, imported once a command runs.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from typing import TypeVar

PROVIDERS = ("openrouter", "anthropic", "openai", "compatible", "scripted")
EFFORTS = ("low", "medium", "high")
"""`core.transcript.EFFORTS`, written out so `--help` loads no more (a test holds them equal)."""


def add_provider_options(p: argparse.ArgumentParser) -> None:
    """The provider's options: which, its model, endpoint, key variable, effort and tape."""
    p.add_argument(
        "--provider", choices=PROVIDERS, help="model back-end (default: from the environment)"
    )
    p.add_argument("--model", help="model slug")
    p.add_argument("--base-url", help="endpoint (compatible; an override for the others)")
    p.add_argument(
        "--api-key-env",
        metavar="NAME",
        type=_env_name,
        help="the environment variable holding the provider's key (never the key itself)",
    )
    p.add_argument(
        "--reasoning-effort",
        choices=EFFORTS,
        help="how hard a model that reasons thinks (Anthropic: extended thinking's budget)",
    )
    p.add_argument("--profile", metavar="NAME", help="a [profiles.NAME] of the configuration files")
    p.add_argument("--scenario", help="scenario file for --provider scripted")
    p.add_argument(
        "--fallback",
        metavar="PROVIDER[:MODEL]",
        help="a provider taken when the first one's retries are spent (its key, base URL and, "
        "without :MODEL, model from the environment)",
    )
    tape = p.add_mutually_exclusive_group()
    tape.add_argument(
        "--record", metavar="FILE", help="append each of the model's answers to FILE (JSON lines)"
    )
    tape.add_argument(
        "--replay",
        metavar="FILE",
        help="answer from a recording instead of calling any model (no key, no network)",
    )


def add_run_options(p: argparse.ArgumentParser) -> None:
    """Every run option of `run`, `exec` and `resume`."""
    p.add_argument("--workspace", help="workspace root (default: the current directory)")
    p.add_argument("--file", help="single-file mode: the one file the run edits")
    p.add_argument("--contract", help="a TOML task contract; flags override it")
    p.add_argument(
        "--verify-cmd", help="Command gate: split with shell-like quoting, run with no shell"
    )
    p.add_argument(
        "--expect-exit", type=_exit_status, help="exit status the gate requires (default 0)"
    )
    add_provider_options(p)
    p.add_argument("--max-steps", type=_positive_int)
    p.add_argument("--time-budget", type=_positive_float, metavar="SECONDS")
    p.add_argument("--token-budget", type=_positive_int)
    p.add_argument("--max-retries", type=_non_negative_int)
    p.add_argument(
        "--stall-after",
        type=_non_negative_int,
        metavar="N",
        help="repeated or idle steps in a row that end the run stalled (default 5; 0: never)",
    )
    p.add_argument(
        "--context-window",
        type=_positive_int,
        metavar="TOKENS",
        help="the model's context window (default: the shipped table's, by model name)",
    )
    p.add_argument("--policy", help="a TOML policy stacked over the default tiers")
    p.add_argument(
        "--trust-project",
        action="store_true",
        help="use the project file's policy, hooks and MCP servers without asking first"
        " (exec leaves them out otherwise; the app shows them once)",
    )
    p.add_argument("--store", default=argparse.SUPPRESS, help="the SQLite store")
    p.add_argument(
        "--sandbox",
        choices=("auto", "bwrap", "namespaces", "floor", "none"),
        help="containment for commands (default auto: the strongest here); floor and none cannot"
        " hide the store, your files or the network from them (docs/security.md)",
    )
    p.add_argument(
        "--gate-timeout",
        type=_positive_float,
        metavar="SECONDS",
        help="the gate's wall-clock cap per command (default 120)",
    )
    p.add_argument(
        "--gate-cpu",
        type=_positive_float,
        metavar="SECONDS",
        help="the gate's CPU cap (default 60)",
    )
    p.add_argument(
        "--gate-memory",
        type=_positive_int,
        metavar="MB",
        help="the gate's memory cap (default 2048)",
    )
    p.add_argument("--max-agents", type=_positive_int)
    p.add_argument("--max-concurrent", type=_positive_int)
    p.add_argument("--max-depth", type=_non_negative_int)
    p.add_argument("--tree-token-budget", type=_positive_int)


def add_fleet_option(p: argparse.ArgumentParser) -> None:
    """`--ray ADDRESS`: where a tree's sub-agents run (the commands that run trees)."""
    p.add_argument(
        "--ray",
        metavar="ADDRESS",
        help="run a tree's sub-agents on a Ray cluster: auto (a running one), local (start one "
        "here), or an address (needs the ray extra; docs/scaling.md)",
    )


def add_continue_option(p: argparse.ArgumentParser) -> None:
    """`--continue RUN`: a new run that carries on a stored run's conversation."""
    p.add_argument(
        "--continue",
        dest="continue_run",
        metavar="RUN",
        help="carry on RUN's conversation: the model reads its turns (and those it carried on) "
        "before the new goal; the workspace is RUN's",
    )


_T = TypeVar("_T")


def _positive_int(text: str) -> int:
    value = _parsed(int, text, "a positive integer")
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive integer, not {text}")
    return value


def _non_negative_int(text: str) -> int:
    value = _parsed(int, text, "an integer >= 0")
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, not {text}")
    return value


def _positive_float(text: str) -> float:
    value = _parsed(float, text, "a positive number")
    # NaN compares false with everything, so a budget of `nan` would never be reached.
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive finite number, not {text!r}")
    return value


def _exit_status(text: str) -> int:
    value = _parsed(int, text, "an exit status (0-255)")
    if not 0 <= value <= 255:
        raise argparse.ArgumentTypeError(f"must be an exit status (0-255), not {text}")
    return value


def _env_name(text: str) -> str:
    # Imported when the option is given: the configuration package is not for --help.
    from ioh_tui.config.schema import env_name

    try:
        return env_name(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _parsed(kind: Callable[[str], _T], text: str, wanted: str) -> _T:
    """`kind(text)`; a ValueError in the user's words, not the converter's name."""
    try:
        return kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be {wanted}, not {text!r}") from None


DECIDE_CHOICES = ("approve", "deny", "rewrite", "remember")
SCOPES = ("run", "project", "user")


def add_decide_options(parser: argparse.ArgumentParser) -> None:
    """`--decide` and the options that go with each answer."""
    parser.add_argument(
        "--decide", choices=DECIDE_CHOICES, help="answer the pending decision first"
    )
    parser.add_argument(
        "--reason", default="", help="with --decide deny: the reason the model reads"
    )
    parser.add_argument(
        "--to",
        metavar="TEXT",
        help="with --decide rewrite: the new content of a write or edit, else the new target",
    )
    parser.add_argument(
        "--pattern",
        metavar="GLOB",
        help="with --decide remember: the rule's pattern (default: the request's exact target)",
    )
    parser.add_argument(
        "--scope",
        choices=SCOPES,
        help="with --decide remember: keep the rule for the run (default), or save it for the "
        "project's or the user's later runs too",
    )


def add_mcp_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """`mcp list` and its options."""
    mcp = sub.add_parser("mcp", help="configured MCP servers, their state and tools")
    verbs = mcp.add_subparsers(dest="mcp_command", metavar="VERB", required=True)
    listing = verbs.add_parser("list", help="start each server, list its tools, stop it")
    listing.add_argument("--json", action="store_true", help="one JSON document on stdout")
    listing.add_argument("--workspace", help="the project (default: the current directory)")
    listing.add_argument("--sandbox", help="containment for local servers (default: auto)")
    listing.add_argument("--policy", help="a policy file (its net rules give servers the network)")
    listing.add_argument("--profile", help=argparse.SUPPRESS)

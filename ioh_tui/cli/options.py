"""Run options (interface.md §1) and how they become a contract, a provider, a policy, a sandbox.

Over 400 lines because every option's parsing and its effective value (flag, configuration,
stored run) meet here; the next split is the provider building (`build_provider`,
`driver_options`, `resume_provider`) into a module of its own.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shlex
import tomllib
from dataclasses import replace
from pathlib import Path
from typing import Any

from ioh_tui.cli.arguments import PROVIDERS

# Read light, in `effective.py` (the start screen reads them before its first frame); the
# commands import them from here too.
from ioh_tui.cli.effective import effective_config as effective_config
from ioh_tui.cli.effective import loaded_config
from ioh_tui.cli.effective import store_path as store_path
from ioh_tui.config import Config
from ioh_tui.config.trust import TrustBook, project_sections, section_risk, section_title
from ioh_tui.core.acts import Act
from ioh_tui.core.errors import ConfigError, SandboxError
from ioh_tui.engine import Containment, TaskContract, load_contract_file
from ioh_tui.policy import Policy, load_policy_file
from ioh_tui.policy.stack import named_by_user, overlay_defaults, stack_files
from ioh_tui.providers.base import Provider
from ioh_tui.providers.fallback import Fallback
from ioh_tui.providers.pricing import PriceTable
from ioh_tui.providers.record import Recorder, Replay
from ioh_tui.providers.registry import make_provider
from ioh_tui.sandbox.base import Sandbox
from ioh_tui.verification import Command, Criterion, NoGate
from ioh_tui.verification.codec import with_gate_limits

_ENV_PROVIDERS = (
    ("OPENROUTER_API_KEY", "openrouter"),
    ("ANTHROPIC_API_KEY", "anthropic"),
    ("OPENAI_API_KEY", "openai"),
)


def untrusted_sections(args: argparse.Namespace) -> list[tuple[str, str, Path, str]]:
    """The project sections left out of the run for want of agreement, for the app to show.

    Each as (kind, title, file, body as text).
    """
    left_out = effective_config(args).left_out
    if not left_out:
        return []
    sections = project_sections(loaded_config(args)[0])
    return [
        (kind, section_title(kind), file, json.dumps(sections[kind], indent=2, sort_keys=True))
        for kind, file in left_out
    ]


def agree_to(args: argparse.Namespace, kind: str) -> None:
    """Record the user's agreement to the project's `kind` section as it is now."""
    config, root = loaded_config(args)
    TrustBook().trust(root, kind, project_sections(config)[kind])


def left_out_lines(config: Config) -> list[str]:
    """One line per project section left out of `config`, saying how to use it."""
    return [
        f"{file}: {section_title(kind)} left out: {section_risk(kind)}, and you have not "
        "agreed to it; --trust-project uses it"
        for kind, file in config.left_out
    ]


def build_contract(args: argparse.Namespace) -> tuple[TaskContract, str | None]:
    """The contract from `--contract` and the flags (flags win), and the contract's policy TOML."""
    fields: dict[str, Any] = {}
    policy_toml = None
    base_dir = Path.cwd()
    if args.contract:
        parsed = load_contract_file(args.contract)
        fields, policy_toml = dict(parsed.fields), parsed.policy_toml
        base_dir = Path(args.contract).resolve().parent
    goal = getattr(args, "goal", None) or fields.get("goal")
    if not goal:
        raise ConfigError("no goal: give one on the command line or in the contract")
    root = (
        Path(args.workspace)
        if args.workspace
        else (base_dir / fields["workspace"] if "workspace" in fields else Path.cwd())
    )
    if not root.is_dir():
        raise ConfigError(f"workspace {root} does not exist or is not a directory")
    criterion = _criterion(args, fields.get("verification"))
    subject = args.file if args.file is not None else fields.get("file")
    if subject is not None:
        named = "--file" if args.file is not None else f"contract {args.contract}: file"
        subject = _inside(root, subject, named)
        if not (root / subject).parent.is_dir():
            raise ConfigError(f"the directory of {subject} does not exist in {root}")
        contract = TaskContract(
            goal, "single_file", root.resolve(), subject, criterion, max_steps=8
        )
    else:
        contract = TaskContract.workspace(goal, root, criterion)
    contract = replace(contract, constraints=tuple(fields.get("constraints", ())))
    # Flags, then the contract file, then the configuration (environment, project, user).
    config = effective_config(args)

    def pick(dest: str | None, key: str, path: str) -> Any:
        flag = getattr(args, dest, None) if dest else None
        if flag is not None:
            return flag
        return fields[key] if fields.get(key) is not None else config.given(path)

    budgets = {
        "max_steps": pick("max_steps", "max_steps", "budgets.max_steps"),
        "time_budget_s": pick("time_budget", "time_budget_s", "budgets.time_budget_s"),
        "token_budget": pick("token_budget", "token_budget", "budgets.token_budget"),
        "max_retries": pick("max_retries", "max_retries", "budgets.max_retries"),
        "exec_timeout_s": pick(None, "exec_timeout_s", "budgets.exec_timeout_s"),
        "stall_after": pick("stall_after", "stall_after", "budgets.stall_after"),
        "context_window": pick("context_window", "context_window", "context.window"),
    }
    contract = replace(contract, **{k: v for k, v in budgets.items() if v is not None})
    gate = fields.get("gate", {})
    caps = {
        key: flag
        if (flag := getattr(args, dest, None)) is not None
        else gate.get(key, config.given(f"gate.{key}"))
        for dest, key in (
            ("gate_timeout", "timeout_s"),
            ("gate_cpu", "cpu_s"),
            ("gate_memory", "memory_mb"),
        )
    }
    contract = replace(contract, verification=with_gate_limits(contract.verification, caps))
    return contract, policy_toml


def _inside(root: Path, subject: str, named: str) -> str:
    """The single file as a path relative to the workspace.

    Raises:
        ConfigError: it is empty or not inside the workspace (`named` says where it was given).
    """
    if not subject.strip():
        raise ConfigError(f"{named} is empty: give the file the run edits")
    # Lexically, so a relative name stays the name given; an absolute one may name the
    # workspace as given or as resolved.
    as_given = Path(os.path.normpath(root.absolute()))
    path = Path(os.path.normpath(as_given / subject))
    for base in (as_given, root.resolve()):
        if base in path.parents:
            return path.relative_to(base).as_posix()
    raise ConfigError(f"{named} {subject} is not inside the workspace {root.resolve()}")


def _criterion(args: argparse.Namespace, from_file: Criterion | None) -> Criterion:
    if args.verify_cmd is not None:
        try:
            argv = shlex.split(args.verify_cmd)
        except ValueError as exc:
            raise ConfigError(f"--verify-cmd cannot be split: {exc}") from None
        if not argv:
            raise ConfigError("--verify-cmd is empty: give the command the gate runs")
        return Command(argv, args.expect_exit if args.expect_exit is not None else 0)
    if args.expect_exit is not None:
        if isinstance(from_file, Command):
            return Command(list(from_file.argv), args.expect_exit)
        raise ConfigError("--expect-exit needs a command gate (--verify-cmd)")
    return from_file or NoGate()


def budget_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """Budgets given on a `resume` command line (they replace the stored ones).

    `--tree-token-budget` raises a tree's token ceiling (the engine refuses a lower one).
    """
    out: dict[str, Any] = {}
    for flag, key in (
        ("max_steps", "max_steps"),
        ("time_budget", "time_budget_s"),
        ("token_budget", "token_budget"),
        ("tree_token_budget", "max_total_tokens"),
        ("stall_after", "stall_after"),
        ("context_window", "context_window"),
    ):
        if getattr(args, flag, None) is not None:
            out[key] = getattr(args, flag)
    if getattr(args, "max_retries", None) is not None:
        out["max_retries"] = args.max_retries
    return out


def build_policy(
    args: argparse.Namespace, contract_policy: str | None, *, files: bool = True
) -> Policy:
    """The run's policy, every layer naming its file (deny-first across all of them).

    From the bottom: the default tiers; the user's and the project's files (`[policy]` of each
    configuration file and the remembered rules, `policy/stack.py`; a project's widening ones
    only once agreed to); the contract's policy; `--policy`. The contract's `[policy.defaults]`
    replace the defaults below for the acts it names (the others keep what the files say), so a
    contract can loosen them as well as tighten them: the contract is the task's own statement of
    what it needs. An act the user's file names is the user's choice and the contract may only
    tighten it, as a project's file may. `--policy` only adds: its defaults are merged
    stricter-wins.

    Args:
        args: the command's options.
        contract_policy: the contract's policy TOML, if any.
        files: stack the configuration's files (False: a resumed run keeps its stored ones).
    """
    policy = Policy.default()
    kept: set[Act] = set()
    if files:
        workspace = Path(args.workspace) if getattr(args, "workspace", None) else Path.cwd()
        stacked = effective_config(args).policy_files()
        policy = stack_files(policy, stacked, workspace)
        kept = named_by_user(stacked)
    if contract_policy:
        from_contract = sourced(Policy.from_toml(contract_policy), getattr(args, "contract", None))
        named = tomllib.loads(contract_policy)["policy"].get("defaults", {})
        acts = [act for act in Act if act.value in named]
        defaults = overlay_defaults(policy.defaults, from_contract.defaults, acts, kept)
        policy = Policy(policy.layers + from_contract.layers, defaults)
    # `ioh-tui` and `demo` have no `--policy` (their start screen lists MCP servers under this).
    given = getattr(args, "policy", None)
    if given:
        policy = policy.merge(sourced(load_policy_file(given), given))
    return policy


def sourced(policy: Policy, path: str | None) -> Policy:
    """`policy` with every layer naming `path` as the file it came from."""
    if not path:
        return policy
    source = str(Path(path).resolve())
    return Policy(tuple(replace(layer, source=source) for layer in policy.layers), policy.defaults)


def build_provider(args: argparse.Namespace, max_retries: int) -> Provider:
    """The provider named by the options, or the one the environment configures.

    `--replay FILE` answers from the recording instead (the provider options are not read);
    `--fallback PROVIDER[:MODEL]` chains a second provider behind the first (`Fallback`);
    `--record FILE` wraps the provider (or the chain) so each answer is appended to FILE.

    Raises:
        ConfigError: no provider is configured, or the recording cannot be read or written.
    """
    replay = getattr(args, "replay", None)
    if replay:
        return Replay.load(replay)
    try:
        provider = _named_provider(args, max_retries)
    except ConfigError as exc:
        if any(kind == "provider" for kind, _ in effective_config(args).left_out):
            # The provider may need what the project's file sets: say how to use it.
            raise ConfigError(
                f"{exc} (the project's base_url and api_key_env were left out: "
                "--trust-project uses them)"
            ) from None
        raise
    fallback = effective_config(args).get("provider.fallback")
    if fallback:
        provider = Fallback([provider, _fallback_provider(fallback, args, max_retries)])
    record = getattr(args, "record", None)
    return Recorder(provider, record) if record else provider


def _named_provider(args: argparse.Namespace, max_retries: int) -> Provider:
    config = effective_config(args)
    name = config.get("provider.name")
    if name is None:
        if args.scenario:
            name = "scripted"
        else:
            name = next((p for var, p in _ENV_PROVIDERS if os.environ.get(var)), None)
        if name is None:
            raise ConfigError(
                "no provider configured: set OPENROUTER_API_KEY, ANTHROPIC_API_KEY or "
                "OPENAI_API_KEY "
                "(with its *_MODEL), or pass --provider scripted --scenario FILE"
            )
    if name == "scripted" and not args.scenario:
        raise ConfigError("--provider scripted needs --scenario FILE")
    return make_provider(
        name,
        model=config.get("provider.model"),
        base_url=config.get("provider.base_url"),
        api_key=_key(config),
        scenario=args.scenario,
        max_retries=max_retries,
        prices=_prices(config, getattr(args, "pricing_file", None)),
        reasoning=config.get("provider.reasoning_effort"),
    )


def _key(config: Config) -> str | None:
    """The key in the variable `api_key_env` names (None: the provider's own variable).

    Raises:
        ConfigError: the variable is named but not set (its name, never a value, is reported).
    """
    setting = config.values["provider.api_key_env"]
    if setting.value is None:
        return None
    key = os.environ.get(setting.value)
    if not key:
        raise ConfigError(f"{setting.value} is not set (named by api_key_env, {setting.source})")
    return key


def _prices(config: Config, stored: str | None) -> PriceTable | None:
    """The shipped price table extended by `[pricing] file` (None: the shipped one alone).

    `stored` is the file a resumed run started with (it wins: the run keeps its prices).
    """
    path = stored or config.get("pricing.file")
    return PriceTable.builtin().extended(PriceTable.load(path)) if path else None


def _fallback_provider(spec: str, args: argparse.Namespace, max_retries: int) -> Provider:
    """The provider `--fallback PROVIDER[:MODEL]` names (the model may hold colons itself)."""
    name, _, model = spec.partition(":")
    if name not in PROVIDERS:
        raise ConfigError(
            f"--fallback {spec!r}: unknown provider {name!r} (choose from {', '.join(PROVIDERS)})"
        )
    if name == "scripted" and not args.scenario:
        raise ConfigError("--fallback scripted needs --scenario FILE")
    if name == "compatible" and not os.environ.get("OPENAI_BASE_URL"):
        # --base-url is the first provider's: a compatible fallback's endpoint is the variable's.
        raise ConfigError("--fallback compatible takes its endpoint from OPENAI_BASE_URL: not set")
    try:
        return make_provider(
            name, model=model or None, scenario=args.scenario, max_retries=max_retries
        )
    except ConfigError as exc:
        raise ConfigError(f"--fallback {spec}: {exc}") from None


def build_containment(args: argparse.Namespace) -> Containment | None:
    """A tree's containment when any of its options is given (that enables `spawn_agent`)."""
    given = {
        "max_total_agents": args.max_agents,
        "max_concurrent": args.max_concurrent,
        "max_depth": args.max_depth,
        "max_total_tokens": args.tree_token_budget,
    }
    if all(v is None for v in given.values()):
        return None
    return Containment(**{k: v for k, v in given.items() if v is not None})


def driver_options(args: argparse.Namespace) -> dict[str, str]:
    """The provider options worth keeping with a run, so `resume` needs none (never a key).

    What the configuration files and the environment chose counts too: a run resumed after a file
    changed keeps the provider it started with. `api_key_env` is a variable's name, not a key.
    """
    config = effective_config(args)
    kept = {
        "provider": args.provider or config.given("provider.name"),
        "model": args.model or _chosen(config, "provider.model"),
        "base_url": args.base_url or _chosen(config, "provider.base_url"),
        "api_key_env": config.given("provider.api_key_env"),
        "reasoning_effort": config.given("provider.reasoning_effort"),
        "fallback": config.given("provider.fallback"),
        "pricing": config.given("pricing.file"),
    }
    if args.scenario:
        kept["scenario"] = str(Path(args.scenario).resolve())
    return {k: v for k, v in kept.items() if v}


def _chosen(config: Config, path: str) -> Any:
    """A value a file, a profile or a variable chose (kept: only keys are read again on resume)."""
    value = config.values[path]
    return None if value.source == "default" else value.value


_STORED_DRIVER = (
    "provider",
    "model",
    "base_url",
    "scenario",
    "fallback",
    "api_key_env",
    "reasoning_effort",
)
"""The stored driver options a resume takes where its command line says nothing."""


def with_stored_driver(args: argparse.Namespace, contract: dict[str, Any]) -> argparse.Namespace:
    """`args` with the run's stored provider options filling what the command line left out."""
    stored = contract.get("driver", {})
    if args.provider or args.scenario:
        return args
    merged = argparse.Namespace(**vars(args))
    for key in _STORED_DRIVER:
        if getattr(merged, key, None) is None and key in stored:
            setattr(merged, key, stored[key])
    if "pricing" in stored:
        merged.pricing_file = stored["pricing"]
    return merged


def stored_provider(contract: dict[str, Any]) -> Provider:
    """The provider that continues a stored run in the app (its browser, a deferred decision).

    Built as `ioh-tui resume RUN_ID` builds it without provider options: from the run's stored
    driver options (provider, model, base URL, scenario, fallback) and the environment's keys.
    """
    blank = argparse.Namespace(**dict.fromkeys(_STORED_DRIVER))
    retries = contract.get("max_retries", 2)
    return build_provider(
        with_stored_driver(blank, contract), retries if isinstance(retries, int) else 2
    )


def stored_root(args: argparse.Namespace, store: Path) -> Path:
    """The workspace of the stored run `args.run_id` (its hooks and servers are that project's).

    Raises:
        ResumeError: There is no such run.
        ConfigError: The stored contract cannot be read.
    """
    from ioh_tui.store import Store

    async def read() -> dict[str, Any]:
        async with Store.open(store) as opened:
            return (await opened.run(args.run_id)).contract

    return TaskContract.from_dict(asyncio.run(read())).root


def resume_provider(args: argparse.Namespace, store: Path) -> Provider:
    """The provider `ioh-tui resume RUN_ID` continues with in the app.

    The command line's options, with the run's stored ones filling the gaps, as the headless
    resume builds it.

    Raises:
        ResumeError: There is no such run.
        ConfigError: The workspace given is not the run's.
    """
    from ioh_tui.store import Store

    async def read() -> dict[str, Any]:
        async with Store.open(store) as opened:
            return (await opened.run(args.run_id)).contract

    contract = asyncio.run(read())
    stored = TaskContract.from_dict(contract)
    if args.workspace and stored.root != Path(args.workspace).resolve():
        raise ConfigError(f"run {args.run_id} works in {stored.root}, not {args.workspace}")
    retries = budget_overrides(args).get("max_retries", stored.max_retries)
    return build_provider(with_stored_driver(args, contract), retries)


def build_sandbox(args: argparse.Namespace) -> Sandbox:
    """The sandbox `--sandbox` (else the configuration) asks for (`none` only when asked for)."""
    from ioh_tui.sandbox import select
    from ioh_tui.sandbox.user import ROOT_USER_ENV

    config = effective_config(args)
    # The sandbox reads who commands run as from the variable (so a gate's or server's process
    # started later reads it too): the user file's `root_user` is handed over through it.
    os.environ[ROOT_USER_ENV] = str(config.get("sandbox.root_user"))
    try:
        return select(str(config.get("sandbox.backend")))
    except SandboxError as exc:
        # Asked for by name and missing here: bad configuration, nothing was started (exit 2).
        raise ConfigError(str(exc)) from None

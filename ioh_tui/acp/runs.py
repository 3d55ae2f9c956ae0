"""What one `session/prompt` runs: the `exec` command's configuration, with the prompt as goal.

The same path as `ioh-tui exec` (`cli/new_run.py`): the flags `ioh-tui acp` was started with,
then the environment and the configuration files of the session's workspace (`effective_config`),
its hooks and MCP servers (`run_extensions`), a project's sections left out until agreed to. A run
paused on a deferred decision is continued as `ioh-tui resume RUN --headless` continues it.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ioh_tui.cli.extensions import run_extensions
from ioh_tui.cli.new_run import configured_run
from ioh_tui.cli.options import (
    build_policy,
    build_provider,
    build_sandbox,
    effective_config,
    left_out_lines,
    with_stored_driver,
)
from ioh_tui.core.errors import ConfigError
from ioh_tui.engine import NewRun, Resume, TaskContract
from ioh_tui.hooks import HookSet
from ioh_tui.mcp import ServerSpec
from ioh_tui.policy import Policy
from ioh_tui.providers.base import Provider
from ioh_tui.sandbox.base import Sandbox


@dataclass(frozen=True, slots=True)
class PromptRun:
    """A new run and what it is driven with (the approver and observers are the session's)."""

    request: NewRun | Resume
    provider: Provider
    policy: Policy | None
    """None: a resumed run's stored policy."""
    sandbox: Sandbox
    hooks: HookSet
    servers: tuple[ServerSpec, ...]
    left_out: tuple[str, ...]
    """The project's sections nobody agreed to, one line each (logged, as `exec` says them)."""


def prompt_run(
    args: argparse.Namespace, goal: str, cwd: Path, continues: tuple[int, ...] = ()
) -> PromptRun:
    """The run `goal` starts in workspace `cwd`, configured as `exec` would configure it.

    `continues`: the session's earlier runs, whose conversation the new run carries on.

    Raises:
        ConfigError: A bad flag, configuration file, contract or workspace.
        SandboxError: The sandbox asked for is not available here.
    """
    run_args = argparse.Namespace(**{**vars(args), "goal": goal, "workspace": str(cwd)})
    left_out: list[str] = []
    run = configured_run(run_args, left_out.append)
    return PromptRun(
        replace(run.request, continues=continues),
        run.provider,
        run.policy,
        run.sandbox,
        run.hooks,
        run.servers,
        tuple(left_out),
    )


def resumed_run(args: argparse.Namespace, run_id: int, contract: dict[str, Any]) -> PromptRun:
    """Continue stored run `run_id` (its `contract` as stored), as `ioh-tui resume` would.

    Its provider options are the stored ones unless `ioh-tui acp` was given some; its policy is
    the stored one unless `--policy` was given; hooks and servers are its workspace's.

    Raises:
        ConfigError: The stored contract, a flag or a configuration file is bad.
        SandboxError: The sandbox asked for is not available here.
    """
    try:
        stored = TaskContract.from_dict(contract)
    except ConfigError as exc:
        raise ConfigError(f"run {run_id}: {exc}") from None
    run_args = argparse.Namespace(**{**vars(args), "workspace": str(stored.root)})
    left_out = tuple(left_out_lines(effective_config(run_args)))
    policy = build_policy(run_args, None, files=False) if args.policy else None
    provider = build_provider(with_stored_driver(run_args, contract), stored.max_retries)
    sandbox = build_sandbox(run_args)
    hooks, servers = run_extensions(run_args, stored.root)
    return PromptRun(Resume(run_id), provider, policy, sandbox, hooks, servers, left_out)

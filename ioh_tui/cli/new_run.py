"""A new run as the command line configures it, shared by `exec` and `ioh-tui acp`.

The order is the order the options were always checked in, so the first bad one is the one
reported: the run continued (`--continue`), the contract, the store's placement, the policy, the
provider, the sandbox, the containment caps, then the workspace's hooks and MCP servers.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass

from ioh_tui.cli.continuing import continued
from ioh_tui.cli.extensions import run_extensions
from ioh_tui.cli.options import (
    build_containment,
    build_contract,
    build_policy,
    build_provider,
    build_sandbox,
    driver_options,
    effective_config,
    left_out_lines,
    store_path,
)
from ioh_tui.engine import NewRun, check_contract
from ioh_tui.hooks import HookSet
from ioh_tui.mcp import ServerSpec
from ioh_tui.paths import check_store_placement
from ioh_tui.policy import Policy
from ioh_tui.providers.base import Provider
from ioh_tui.sandbox.base import Sandbox


@dataclass(frozen=True, slots=True)
class ConfiguredRun:
    """A new run and what it is driven with (the approver and observers are the caller's)."""

    request: NewRun
    provider: Provider
    policy: Policy
    sandbox: Sandbox
    hooks: HookSet
    servers: tuple[ServerSpec, ...]


def configured_run(args: argparse.Namespace, left_out: Callable[[str], None]) -> ConfiguredRun:
    """The run the options describe; `left_out` is told each project section left out.

    Raises:
        ConfigError: A bad flag, configuration file, contract or workspace.
        SandboxError: The sandbox asked for is not available here.
    """
    args, continues = continued(args)
    contract, contract_policy = build_contract(args)
    check_contract(contract)
    check_store_placement(store_path(args), contract.root)  # before the store file is made
    # Nobody is there to ask: the project's unagreed sections are left out, each said once.
    for line in left_out_lines(effective_config(args)):
        left_out(line)
    policy = build_policy(args, contract_policy)
    provider = build_provider(args, contract.max_retries)
    sandbox = build_sandbox(args)
    containment = build_containment(args)
    hooks, servers = run_extensions(args, contract.root)
    request = NewRun(contract, containment, driver_options(args), continues=continues)
    return ConfiguredRun(request, provider, policy, sandbox, hooks, servers)

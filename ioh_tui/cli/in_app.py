"""`ioh-tui run` and `ioh-tui resume` in the app, and what its trust modal asks first.

Each run is built (so every option is checked) before the app takes the terminal.

Imported only by those two commands, so the start screen and the headless commands load none
of it; the app's modules are imported inside, as `cli/__init__.py` imports them.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ioh_tui.core.errors import ConfigError

if TYPE_CHECKING:
    from ioh_tui.hooks import HookSet
    from ioh_tui.mcp import ServerSpec
    from ioh_tui.tui.launch import AppRun, TrustQuestion


def run_in_app(args: argparse.Namespace, store: Path) -> int:
    """`ioh-tui run GOAL`: every option built (and so checked) before the app starts."""
    from ioh_tui.cli.extensions import run_extensions
    from ioh_tui.cli.options import stored_provider
    from ioh_tui.tui.launch import launch

    run, agreed = new_app_run(args)

    def extensions(root: Path) -> tuple[HookSet, tuple[ServerSpec, ...]]:
        # A run resumed from the app's browser or queue: the hooks and servers of its workspace.
        return run_extensions(args, root)

    return launch(
        store,
        run,
        stored_provider=stored_provider,
        sandbox=run.sandbox,
        trust=trust_question(args, agreed),
        extensions=extensions,
    )


def new_app_run(args: argparse.Namespace) -> tuple[AppRun, Callable[[], AppRun]]:
    """The run `ioh-tui run` starts, and the same run with what the trust modal agreed to."""
    from dataclasses import replace

    from ioh_tui.cli.continuing import continued
    from ioh_tui.cli.extensions import run_extensions
    from ioh_tui.cli.fleet import connect_fleet, need_a_tree
    from ioh_tui.cli.options import (
        build_containment,
        build_contract,
        build_policy,
        build_provider,
        build_sandbox,
        driver_options,
    )
    from ioh_tui.engine import NewRun, check_contract
    from ioh_tui.tui.launch import AppRun

    args, continues = continued(args)
    contract, contract_policy = build_contract(args)
    check_contract(contract)
    # Built in the order the options were always checked (the first bad one is reported).
    provider = build_provider(args, contract.max_retries)
    policy = build_policy(args, contract_policy)
    sandbox = build_sandbox(args)
    new = NewRun(contract, build_containment(args), driver_options(args), continues=continues)
    need_a_tree(args, new.containment)
    hooks, servers = run_extensions(args, contract.root)
    # Joined (or started) last, once every option reads: the app lets go of it with the run.
    fleet = connect_fleet(args)
    run = AppRun(new, provider, policy, sandbox, mcp=servers, hooks=hooks, fleet=fleet)

    def agreed() -> AppRun:
        # What the person agrees to in the trust modal is used: policy, hooks, servers and the
        # provider's endpoint (kept with the run, so a resume goes to the same place).
        hooks, servers = run_extensions(args, contract.root)
        return replace(
            run,
            request=replace(new, driver=driver_options(args)),
            provider=build_provider(args, contract.max_retries),
            policy=build_policy(args, contract_policy),
            hooks=hooks,
            mcp=servers,
        )

    return run, agreed


def resume_in_app(args: argparse.Namespace, store: Path) -> int:
    """`ioh-tui resume RUN_ID` in the app: its answer, provider and extensions built first."""
    from dataclasses import replace

    from ioh_tui.cli.decide import check_decide, decision_of, needs_request
    from ioh_tui.cli.extensions import for_workspace, run_extensions
    from ioh_tui.cli.fleet import connect_fleet
    from ioh_tui.cli.options import (
        budget_overrides,
        build_policy,
        build_sandbox,
        resume_provider,
        stored_provider,
        stored_root,
    )
    from ioh_tui.engine import Resume
    from ioh_tui.tui.launch import AppRun, launch

    check_decide(args)
    if needs_request(args):
        raise ConfigError(f"--decide {args.decide} needs --headless (the app asks all five)")
    decision = decision_of(args, None)
    provider = resume_provider(args, store)
    stored_policy = build_policy(args, None, files=False) if args.policy else None
    sandbox = build_sandbox(args)
    request = Resume(args.run_id, decision, budget_overrides(args))
    root = stored_root(args, store)
    hooks, servers = run_extensions(args, root)
    fleet = connect_fleet(args)
    run = AppRun(request, provider, stored_policy, sandbox, mcp=servers, hooks=hooks, fleet=fleet)

    def agreed_on_resume() -> AppRun:
        hooks, servers = run_extensions(args, root)
        return replace(run, hooks=hooks, mcp=servers)

    def extensions(root: Path) -> tuple[HookSet, tuple[ServerSpec, ...]]:
        return run_extensions(args, root)

    # The resumed run keeps its stored policy: only the project's hooks and servers are asked.
    trust = trust_question(for_workspace(args, root), agreed_on_resume, policy=False)
    return launch(
        store,
        run,
        stored_provider=stored_provider,
        sandbox=sandbox,
        trust=trust,
        extensions=extensions,
    )


def trust_question(
    args: argparse.Namespace, rebuild: Callable[[], AppRun], *, policy: bool = True
) -> TrustQuestion | None:
    """What the app asks before the run: the project's sections not yet agreed to (or None).

    Args:
        args: the command's options (their workspace is the project's).
        rebuild: the run again, with what was agreed to.
        policy: whether the project's policies and provider endpoint are asked too (not for a
            resumed run, whose policy and provider are the stored ones).
    """
    from ioh_tui.cli.options import agree_to, untrusted_sections
    from ioh_tui.tui.launch import ProjectSection, TrustQuestion

    sections = [
        section
        for section in untrusted_sections(args)
        if policy or section[0] not in ("policy", "rules", "provider")
    ]
    if not sections:
        return None
    return TrustQuestion(
        tuple(ProjectSection(*section) for section in sections),
        lambda kind: agree_to(args, kind),
        rebuild,
    )

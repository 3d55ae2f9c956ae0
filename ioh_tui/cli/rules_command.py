"""`ioh-tui rules [--json]` and `ioh-tui rules revoke ID`: every rule in force, and removing one.

The rules a run in the workspace would start with: the built-in tiers, the configuration files'
policies, the remembered rules (`config/remembered.py`) and `--policy`. The rules of the user's and
the project's files are revoked here; the others say why not (exit 2).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ioh_tui.cli.options import effective_config, left_out_lines, sourced
from ioh_tui.cli.terminal import say, say_json
from ioh_tui.config.remembered import find, revoke, rules_in_force, why_not_revocable
from ioh_tui.core.errors import ConfigError
from ioh_tui.policy import load_policy_file


def rules_command(args: argparse.Namespace) -> int:
    """List the rules in force, or revoke one; 0, or 2 (one line) for an unknown or fixed rule."""
    workspace = Path(args.workspace) if args.workspace else Path.cwd()
    extra = sourced(load_policy_file(args.policy), args.policy) if args.policy else None
    config = effective_config(args)
    found, _ = rules_in_force(workspace, extra=extra, config=config)
    if args.what == "revoke":
        if not args.id:
            raise ConfigError("rules revoke needs the ID of a rule (see ioh-tui rules)")
        rule = find(found, args.id)
        if rule is None:
            raise ConfigError(f"no rule with ID {args.id} is in force here (see ioh-tui rules)")
        if not rule.revocable:
            raise ConfigError(f"rule {rule.id} {why_not_revocable(rule)}")
        revoke(rule, workspace)
        say(f"revoked {rule.id}: {rule.rule.describe()} (removed from {rule.file})")
        return 0
    if args.id:
        raise ConfigError(f"unexpected {args.id!r}: did you mean `ioh-tui rules revoke {args.id}`?")
    if args.json:
        say_json(json.dumps({"rules": [r.to_json() for r in found]}))
    else:
        width = max((len(r.layer) for r in found), default=5)
        for r in found:
            mark = "" if r.revocable else "  (fixed)"
            where = r.file or "built in"
            say(f"{r.id}  {r.layer:<{width}}  {r.rule.describe()}  {where}{mark}")
        say("(fixed: built in, or written in a file you edit; revoke the others by ID)", err=True)
    for line in left_out_lines(config):
        say(f"ioh-tui: {line}", err=True)
    return 0

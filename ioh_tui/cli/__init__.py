"""The `ioh-tui` command: argument parsing and dispatch. The app is imported only to start it."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

from ioh_tui import __version__
from ioh_tui.cli.arguments import (
    _positive_float,
    add_continue_option,
    add_decide_options,
    add_fleet_option,
    add_mcp_parser,
    add_run_options,
)
from ioh_tui.cli.terminal import say
from ioh_tui.core.errors import ConfigError, ConflictError, IohError, ResumeError
from ioh_tui.core.shown import shown

EXIT_USAGE = 2
APPROVAL_CHOICES = ("deny", "defer", "approve", "wait")
"""`--on-approval`: how a headless run answers asks."""


class _Parser(argparse.ArgumentParser):
    """argparse that reports a usage error in one line (exit 2), never a usage dump."""

    def error(self, message: str) -> NoReturn:
        # The message quotes what was typed: shown, not obeyed, by the terminal.
        self.exit(EXIT_USAGE, shown(f"{self.prog}: error: {message} (see --help)") + "\n")


def build_parser() -> argparse.ArgumentParser:
    """Every command and option (interface.md §1)."""
    parser = _Parser(
        prog="ioh-tui", description="Run and supervise AI coding agents from a task contract."
    )
    parser.add_argument("--version", action="version", version=f"ioh-tui {__version__}")
    parser.add_argument("--store", help="the SQLite store (default: in the user data directory)")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser, metavar="COMMAND")

    demo = sub.add_parser("demo", help="the built-in demo (no key, no network)")
    demo.add_argument(
        "--headless", action="store_true", help="run without the app; approvals are approved"
    )
    demo.add_argument("--json", action="store_true", help="with --headless: JSON events on stdout")
    demo.add_argument("--store", default=argparse.SUPPRESS)

    run = sub.add_parser("run", help="supervise a new run in the app")
    run.add_argument("goal")
    add_run_options(run)
    add_fleet_option(run)
    add_continue_option(run)

    exec_ = sub.add_parser("exec", help="a headless run")
    exec_.add_argument("goal")
    add_run_options(exec_)
    add_fleet_option(exec_)
    add_continue_option(exec_)
    exec_.add_argument("--json", action="store_true", help="one JSON event per line on stdout")
    exec_.add_argument(
        "--on-approval",
        choices=APPROVAL_CHOICES,
        default="deny",
        help="answer every ask this way (default deny: the model reads the refusal); "
        "wait: for an answer from any process (`resume --decide`, the app's queue)",
    )
    _add_approval_timeout(exec_)

    runs = sub.add_parser("runs", help="list runs")
    runs.add_argument("--json", action="store_true")
    runs.add_argument("--store", default=argparse.SUPPRESS)

    show = sub.add_parser("show", help="the trace of one run")
    show.add_argument("run_id", type=int)
    show.add_argument("--json", action="store_true")
    show.add_argument("--store", default=argparse.SUPPRESS)

    approvals = sub.add_parser("approvals", help="pending (deferred) decisions across runs")
    approvals.add_argument("--json", action="store_true")
    approvals.add_argument("--store", default=argparse.SUPPRESS)

    resume = sub.add_parser("resume", help="continue a run from its last committed step")
    resume.add_argument("run_id", type=int)
    add_decide_options(resume)
    resume.add_argument("--headless", action="store_true", help="continue without the app")
    resume.add_argument("--json", action="store_true")
    resume.add_argument("--on-approval", choices=APPROVAL_CHOICES, default="deny")
    _add_approval_timeout(resume)
    add_run_options(resume)
    add_fleet_option(resume)

    config = sub.add_parser(
        "config", help="the effective configuration, each value with its source"
    )
    config.add_argument(
        "what", nargs="?", choices=("path",), help="path: the files read, and whether each exists"
    )
    config.add_argument("--json", action="store_true")
    add_run_options(config)

    rules = sub.add_parser(
        "rules", help="every rule in force, with its layer and file; `rules revoke ID` removes one"
    )
    rules.add_argument(
        "what", nargs="?", choices=("revoke",), help="revoke: remove a remembered rule by its ID"
    )
    rules.add_argument("id", nargs="?", metavar="ID", help="the rule's ID (from `ioh-tui rules`)")
    rules.add_argument("--json", action="store_true")
    rules.add_argument("--workspace", help="the project (default: the current directory)")
    rules.add_argument("--policy", help="a TOML policy a run would be given (listed, fixed)")
    rules.add_argument(
        "--trust-project", action="store_true", help="agree to the project's own sections first"
    )
    add_mcp_parser(sub)

    web = sub.add_parser("web", help="the app in a browser, behind a secret token (web extra)")
    web.add_argument("--host", default="127.0.0.1", help="the address (default 127.0.0.1)")
    web.add_argument("--port", type=int, default=8000, help="the port (0: any free one)")
    web.add_argument(
        "--allow-remote",
        action="store_true",
        help="allow a --host that is not loopback (plain HTTP: put TLS in front, docs/web.md)",
    )
    web.add_argument("--public-url", help="the address a reverse proxy serves it at (https://…)")
    web.add_argument("--store", default=argparse.SUPPRESS)

    acp = sub.add_parser("acp", help="an Agent Client Protocol agent on stdio (docs/acp.md)")
    add_run_options(acp)

    fake = sub.add_parser(
        "serve-fake", help="a loopback model server playing a scenario over the real wire"
    )
    fake.add_argument("--scenario", required=True)
    fake.add_argument("--wire", choices=("openai", "anthropic"), default="openai")
    fake.add_argument("--host", default="127.0.0.1")
    fake.add_argument("--port", type=int, default=0)
    return parser


def _add_approval_timeout(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--approval-timeout",
        type=_positive_float,
        metavar="SECONDS",
        help="with --on-approval wait: defer an ask nobody answered in this time (exit 4)",
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    if (sys.argv[1:] if argv is None else list(argv)) == ["--version"]:
        # What the parser's version action prints, without importing what the parser needs.
        print(f"ioh-tui {__version__}")
        return 0
    try:
        args = build_parser().parse_args(argv)
        return _dispatch(args)
    except BrokenPipeError:
        # The reader went away (`ioh-tui runs | head -1`): what it wanted it has. Point stdout at
        # nothing so the interpreter's last flush cannot fail again, and end quietly.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except (ConfigError, ResumeError, ConflictError) as exc:
        say(f"ioh-tui: {exc}", err=True)
        return EXIT_USAGE
    except IohError as exc:
        say(f"ioh-tui: {exc}", err=True)
        return 1
    except KeyboardInterrupt:
        say("ioh-tui: interrupted", err=True)
        return 1


def _dispatch(args: argparse.Namespace) -> int:
    command = args.command
    if command == "exec":
        from ioh_tui.cli.headless import exec_command

        return exec_command(args)
    if command == "resume" and (args.headless or args.json):
        from ioh_tui.cli.headless import resume_command

        return resume_command(args)
    if command == "config":
        from ioh_tui.cli.config_command import config_command

        return config_command(args)
    if command == "rules":
        from ioh_tui.cli.rules_command import rules_command

        return rules_command(args)
    if command == "mcp":
        from ioh_tui.cli.mcp_command import mcp_command

        return mcp_command(args)
    if command in ("runs", "show", "approvals"):
        from ioh_tui.cli import trace

        return int(getattr(trace, f"{command}_command")(args))
    if command == "web":
        from ioh_tui.web.command import web_command

        return web_command(args)
    if command == "acp":
        from ioh_tui.acp.command import acp_command

        return acp_command(args)
    if command == "serve-fake":
        from ioh_tui.providers.testing.fake_server import run_serve_fake

        return run_serve_fake(args.scenario, args.wire, args.host, args.port)
    if command == "demo" and args.headless:
        from ioh_tui.cli.demo import demo_headless

        return demo_headless(args)
    return _app(args)


def _app(args: argparse.Namespace) -> int:
    """Start the Textual app (the only place the command line reaches into `ioh_tui.tui`).

    The start screen (`ioh-tui`, `ioh-tui demo`) imports here only what its first frame needs:
    the configuration, the store file's check and the app; a run's parts load when first used
    (`cli/start_screen.py`). `run` and `resume` build their run first, so each of their options
    is checked before the app takes the terminal.
    """
    from ioh_tui.cli.effective import effective_config, hand_over, store_path
    from ioh_tui.dbfile.check import check_store
    from ioh_tui.tui.launch import launch

    store = store_path(args)
    # The app reads the store on its first screen: a file it cannot use is one line, not a crash.
    if args.command in ("run", "demo", "resume") or store.exists():
        check_store(store, create=args.command != "resume")
    config = effective_config(args)
    hand_over(config)
    if args.command == "run":
        from ioh_tui.cli.in_app import run_in_app

        return run_in_app(args, store)
    if args.command == "resume":
        from ioh_tui.cli.in_app import resume_in_app

        return resume_in_app(args, store)
    from ioh_tui.cli.start_screen import extensions_for, mcp_lister, stored_provider

    return launch(
        store,
        demo=args.command == "demo",
        stored_provider=stored_provider,
        mcp=mcp_lister(args, config),
        extensions=extensions_for(args),
    )

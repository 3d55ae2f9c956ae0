"""`ioh-tui web [--host 127.0.0.1] [--port N] [--allow-remote] [--public-url URL]`."""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import shlex
import sys

from ioh_tui.cli.options import store_path
from ioh_tui.cli.terminal import say
from ioh_tui.core.errors import ConfigError
from ioh_tui.store.opening import check_store
from ioh_tui.web.guard import is_loopback, new_token

EXTRA = "the browser needs the web extra: pip install 'ioh-tui[web]'"
UNENCRYPTED = (
    "WARNING: serving to the network over plain HTTP: the token and every screen travel "
    "unencrypted unless a TLS proxy is in front (docs/web.md)"
)


def web_command(args: argparse.Namespace) -> int:
    """Serve the app on the store; prints the address carrying this start's token.

    Raises:
        ConfigError: The extra is missing, the address is not loopback without `--allow-remote`,
            or it cannot be listened on (exit 2).
    """
    if importlib.util.find_spec("textual_serve") is None:
        raise ConfigError(EXTRA)
    if not is_loopback(args.host) and not args.allow_remote:
        raise ConfigError(
            f"--host {args.host} is not a loopback address: add --allow-remote to serve the app "
            "to the network (put it behind TLS: docs/web.md)"
        )
    if not 0 <= args.port <= 65535:
        raise ConfigError(f"--port {args.port}: use 0 (any free port) to 65535")
    store = store_path(args).absolute()
    check_store(store, create=True)

    from ioh_tui.web.serve import GuardedServer, quiet_logs, serve

    token = new_token()
    quiet_logs(token)
    command = shlex.join([sys.executable, "-m", "ioh_tui", "--store", str(store)])
    server = GuardedServer(
        command, host=args.host, port=args.port, token=token, public_url=args.public_url
    )
    if not is_loopback(args.host):
        say(UNENCRYPTED, err=True)
    say(f"ioh-tui web: the app on {store}; open (the address carries a secret token):", err=True)
    asyncio.run(serve(server, say))
    return 0

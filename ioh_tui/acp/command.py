"""Start the ACP agent: stdout carries only the protocol, everything else goes to stderr.

The protocol writes to a copy of the original stdout; file descriptor 1 is then pointed at
stderr, so nothing else (a stray print, a library, a child process that inherits it) can put a
byte into the protocol stream.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import logging
import os
import signal
import sys
from typing import cast

from ioh_tui.acp import INSTALL_HINT
from ioh_tui.cli.options import store_path
from ioh_tui.cli.terminal import say
from ioh_tui.store import Store

EXIT_USAGE = 2

STDIO_LIMIT = 50 * 1024 * 1024
"""The longest line read from the client (the SDK's default: prompts can embed files)."""


def acp_command(args: argparse.Namespace) -> int:
    """`ioh-tui acp [run options]`: serve until the client closes stdin (or SIGTERM)."""
    if importlib.util.find_spec("acp") is None:
        say(f"ioh-tui: {INSTALL_HINT}", err=True)
        return EXIT_USAGE
    protocol = os.dup(sys.stdout.fileno())
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="ioh-tui acp: %(message)s")
    asyncio.run(_serve(args, protocol))
    return 0


async def _serve(args: argparse.Namespace, protocol: int) -> None:
    from acp import run_agent
    from acp.interfaces import Agent

    from ioh_tui.acp.agent import IohAgent

    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=STDIO_LIMIT)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    transport, flow = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, os.fdopen(protocol, "wb", buffering=0)
    )
    writer = asyncio.StreamWriter(transport, flow, None, loop)
    async with Store.open(store_path(args)) as store:
        agent = IohAgent(args, store)

        async def stop() -> None:
            # Runs under way end `cancelled` and are recorded before the connection closes.
            await agent.stop_all()
            reader.feed_eof()

        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, lambda: loop.create_task(stop()))
        try:
            # The SDK routes only the methods the agent has; the rest are "method not found".
            # Its "unstable" routes are on for session/resume and session/close, which the
            # protocol made stable in 2026 while this SDK still gates them.
            await run_agent(cast(Agent, agent), writer, reader, use_unstable_protocol=True)
        finally:
            await agent.stop_all()

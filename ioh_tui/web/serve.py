"""The textual-serve server with the token guard, no access log, and the address it printed.

textual-serve's `Server` starts the command once per browser websocket (`TEXTUAL_DRIVER` set
to Textual's web driver) and relays the page's keys and the app's screen. This subclass adds
the guard (`guard.py`) to its aiohttp application, listens itself (so `--port 0` takes a free
port and the printed address names it), and logs nothing a request carries: aiohttp's access
log, which prints every URL, is off, and every other line has the token blotted out.

textual-serve imports aiohttp and Rich, not Textual: the app runs in the `ioh-tui` process each
tab starts, so this package stays outside `ioh_tui/tui/` (and out of the Rich ban, by need).
"""

from __future__ import annotations

import asyncio
import logging
import signal
import sys
from collections.abc import Callable

from aiohttp import web
from textual_serve.server import Server

from ioh_tui.core.errors import ConfigError
from ioh_tui.web.guard import TOKEN_PARAM, token_guard


class GuardedServer(Server):
    """textual-serve's server, every request checked for the token of this start."""

    def __init__(self, command: str, *, host: str, port: int, token: str, public_url: str | None):
        """Serve `command` (one process per tab) on `host`:`port`; `public_url`: behind a proxy."""
        super().__init__(command, host=host, port=port, title="ioh-tui", public_url=public_url)
        self.token = token
        self._proxied = public_url is not None

    async def _make_app(self) -> web.Application:
        app = await super()._make_app()
        secure = self.public_url.startswith("https:")
        app.middlewares.append(token_guard(self.token, secure=secure))
        return app

    async def on_startup(self, app: web.Application) -> None:
        """Say nothing here: the address is printed once the port is bound (`serve`)."""

    def listening_on(self, port: int) -> None:
        """The port bound: the page's own address (and its websocket's) unless a proxy's given."""
        self.port = port
        if not self._proxied:
            host = f"[{self.host}]" if ":" in self.host else self.host
            self.public_url = f"http://{host}:{port}"


class _Blot(logging.Filter):
    """Blots the token out of every log line (a URL in an error message, say)."""

    def __init__(self, token: str) -> None:
        super().__init__()
        self.token = token

    def filter(self, record: logging.LogRecord) -> bool:
        text = record.getMessage()
        if self.token in text:
            record.msg, record.args = text.replace(self.token, "[token]"), None
        return True


def quiet_logs(token: str) -> None:
    """Warnings and errors only, on stderr, with the token blotted out."""
    handler = logging.StreamHandler(sys.stderr)
    handler.addFilter(_Blot(token))
    handler.setFormatter(logging.Formatter("ioh-tui web: %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.WARNING)


async def serve(server: GuardedServer, say: Callable[[str], None]) -> None:
    """Listen until SIGINT or SIGTERM; `say` is told the address, token and all, once bound.

    Raises:
        ConfigError: The address cannot be listened on (taken, or not this machine's).
    """
    runner = web.AppRunner(await server._make_app(), access_log=None, handle_signals=False)
    await runner.setup()
    try:
        site = web.TCPSite(runner, server.host, server.port)
        try:
            await site.start()
        except OSError as exc:
            raise ConfigError(
                f"cannot listen on {server.host}:{server.port}: {exc.strerror or exc}"
            ) from None
        server.listening_on(runner.addresses[0][1])
        say(f"{server.public_url}/?{TOKEN_PARAM}={server.token}")
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        await stop.wait()
    finally:
        await runner.cleanup()

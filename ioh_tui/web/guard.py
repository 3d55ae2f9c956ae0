"""The token every request needs, and where the server may listen.

A request carrying `?token=` with the right value is redirected to the same path without it,
setting an HttpOnly cookie that carries the token from then on (so the page's assets and its
websocket are let in, and the token leaves the address bar and the history). Anything else —
a page, a static file, the websocket, a path that does not exist — is 403. A websocket must also
come from a page of this server (its `Origin` names the host it asks), so another site open in
the same browser cannot drive the app.
"""

from __future__ import annotations

import hmac
import ipaddress
import secrets
from urllib.parse import urlsplit

from aiohttp import web
from aiohttp.typedefs import Handler, Middleware

COOKIE = "ioh_tui_token"
TOKEN_PARAM = "token"
REFUSED = "403 Forbidden: open the address `ioh-tui web` printed (it carries the token)\n"


def new_token() -> str:
    """A fresh secret for one start of the server."""
    return secrets.token_urlsafe(32)


def is_loopback(host: str) -> bool:
    """Whether `host` names this machine only (no name is looked up: only `localhost` is one)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _same(given: str | None, token: str) -> bool:
    return given is not None and hmac.compare_digest(given.encode(), token.encode())


def token_guard(token: str, *, secure: bool) -> Middleware:
    """The aiohttp middleware letting in only requests that carry `token`.

    Args:
        token: The secret of this start.
        secure: Whether the cookie is sent only over HTTPS (the public address is https).
    """

    @web.middleware
    async def guard(request: web.Request, handler: Handler) -> web.StreamResponse:
        if _same(request.query.get(TOKEN_PARAM), token):
            kept = [(k, v) for k, v in request.query.items() if k != TOKEN_PARAM]
            rest = request.rel_url.with_query(kept)
            found = web.Response(status=302, headers={"Location": str(rest)})
            found.set_cookie(COOKIE, token, httponly=True, samesite="Lax", secure=secure, path="/")
            return found
        if not _same(request.cookies.get(COOKIE), token):
            return web.Response(status=403, text=REFUSED)
        origin = request.headers.get("Origin")
        if request.path == "/ws" and origin is not None and urlsplit(origin).netloc != request.host:
            return web.Response(status=403, text="403 Forbidden: a websocket from another site\n")
        return await handler(request)

    return guard

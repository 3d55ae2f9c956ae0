"""`ioh-tui web`: the real server on 127.0.0.1, a real HTTP client, and Debian's Chromium.

The browser is driven by Playwright through the Chromium that `.ci/run` installs with apt (no
browser is ever downloaded). Every request that would leave 127.0.0.1 (the page names a web font)
is aborted: the suite never reaches another address.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest

from ioh_tui.cli import main
from ioh_tui.web.guard import is_loopback
from tests.integration.cli.test_exec import ioh
from tests.integration.cli.test_waiting_runs import WaitingExec
from tests.tui.harness import FIXED

CHROMIUM = next(
    (
        p
        for p in ("/usr/lib/chromium/chromium", shutil.which("chromium") or "")
        if os.path.isfile(p)
    ),
    None,
)
SCREENSHOT_ENV = "SAVE_WEB_SCREENSHOT"
"""Where the browser test also saves its picture (`screenshots/web-decision.png` for the docs)."""
ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]")


class WebServer:
    """An `ioh-tui web --port 0` process; `url` is the address it printed, token and all."""

    def __init__(self, store: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "ioh_tui", "web", "--port", "0", "--store", str(store)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        self.url = self.proc.stdout.readline().strip()
        assert self.url.startswith("http://127.0.0.1:"), self.proc.stderr
        self.base, _, self.token = self.url.partition("/?token=")

    def stop(self) -> str:
        """SIGTERM it; what it wrote on stderr."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        _, err = self.proc.communicate(timeout=20)
        return err


@pytest.fixture
def server(tmp_path: Path) -> Iterator[WebServer]:
    web = WebServer(tmp_path / "store.db")
    yield web
    web.stop()


async def _status(url: str, cookie: str | None = None) -> tuple[int, str | None]:
    jar = aiohttp.DummyCookieJar()
    headers = {"Cookie": f"ioh_tui_token={cookie}"} if cookie is not None else {}
    async with (
        aiohttp.ClientSession(cookie_jar=jar) as session,
        session.get(url, allow_redirects=False, headers=headers) as response,
    ):
        return response.status, response.headers.get("Set-Cookie")


async def _websocket(url: str, cookie: str | None) -> int:
    headers = {"Cookie": f"ioh_tui_token={cookie}"} if cookie is not None else {}
    async with aiohttp.ClientSession() as session:
        try:
            async with session.ws_connect(url, headers=headers) as socket:
                await socket.close()
                return 101
        except aiohttp.WSServerHandshakeError as exc:
            return exc.status


def test_every_page_asset_and_socket_needs_the_token_and_it_is_never_logged(
    server: WebServer,
) -> None:
    base, token = server.base, server.token

    async def probe() -> dict[str, tuple[int, str | None]]:
        ws = base.replace("http:", "ws:") + "/ws"
        return {
            "page": await _status(f"{base}/"),
            "asset": await _status(f"{base}/static/js/textual.js"),
            "missing": await _status(f"{base}/nothing-here"),
            "wrong token": await _status(f"{base}/?token=not-it"),
            "wrong cookie": await _status(f"{base}/static/js/textual.js", "not-it"),
            "socket": (await _websocket(ws, None), None),
            "socket, wrong cookie": (await _websocket(ws, "not-it"), None),
            "good token": await _status(server.url),
            "asset with the cookie": await _status(f"{base}/static/js/textual.js", token),
        }

    seen = asyncio.run(probe())
    for what in ("page", "asset", "missing", "wrong token", "wrong cookie"):
        assert seen[what] == (403, None), what
    assert seen["socket"] == seen["socket, wrong cookie"] == (403, None)
    status, cookie = seen["good token"]
    assert status == 302 and cookie is not None
    assert f"ioh_tui_token={token}" in cookie and "HttpOnly" in cookie
    assert seen["asset with the cookie"] == (200, None)
    err = server.stop()
    assert token not in err  # no access log, no URL in any line


def test_a_host_that_is_not_loopback_needs_allow_remote(tmp_path: Path) -> None:
    done = ioh("web", "--host", "0.0.0.0", "--store", str(tmp_path / "s.db"))
    assert done.returncode == 2
    assert done.stderr.startswith("ioh-tui: --host 0.0.0.0 is not a loopback address: add --allow")
    assert [is_loopback(h) for h in ("127.0.0.1", "::1", "localhost", "10.0.0.1", "a.b")] == [
        True,
        True,
        True,
        False,
        False,
    ]


def test_without_the_web_extra_one_line_names_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "textual_serve", None)
    monkeypatch.delitem(sys.modules, "ioh_tui.web.serve", raising=False)
    assert main(["web", "--store", str(tmp_path / "s.db")]) == 2
    err = capsys.readouterr().err
    assert err == "ioh-tui: the browser needs the web extra: pip install 'ioh-tui[web]'\n"


def _screen_text(frames: list[bytes]) -> str:
    """What the app wrote to the page so far, escape sequences taken out."""
    return ANSI.sub(b"", b"".join(frames)).decode("utf-8", "replace")


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (.ci/run does)")
def test_a_waiting_headless_run_is_answered_with_keys_in_the_browser(
    project: Path, tmp_path: Path
) -> None:
    from playwright.sync_api import Route, WebSocket, sync_playwright

    waiting = WaitingExec(project, tmp_path)
    web = WebServer(waiting.store)
    try:
        asked = waiting.until("approval_requested")
        frames: list[bytes] = []

        def on_socket(socket: WebSocket) -> None:
            socket.on(
                "framereceived",
                lambda payload: frames.append(
                    payload if isinstance(payload, bytes) else payload.encode()
                ),
            )

        def local_only(route: Route) -> None:
            if route.request.url.startswith(web.base):
                route.continue_()
            else:
                route.abort()

        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1280, "height": 720})
            page.route("**/*", local_only)
            refused = page.goto(web.base + "/")
            assert refused is not None and refused.status == 403
            page.on("websocket", on_socket)
            shown = page.goto(web.url)
            assert shown is not None and shown.status == 200
            assert "token" not in page.url  # the redirect took it out of the address bar

            def wait_for(text: str) -> None:
                for _ in range(300):
                    if text in _screen_text(frames):
                        return
                    page.wait_for_timeout(50)
                raise AssertionError(f"{text!r} never reached the page: {_screen_text(frames)}")

            wait_for("supervise AI coding agents")  # the start screen
            wait_for("calc.py")  # the waiting run's decision, listed
            page.focus("textarea.xterm-helper-textarea")  # the terminal takes the keys
            page.keyboard.press("w")  # the decision queue
            wait_for("elsewhere")  # its row: a run another process drives
            page.keyboard.press("Enter")
            wait_for("e rewrite")  # the decision modal
            picture = os.environ.get(SCREENSHOT_ENV) or str(tmp_path / "web.png")
            page.screenshot(path=picture)
            page.keyboard.press("y")
            status, last = waiting.finish()
            browser.close()
    finally:
        web.stop()
        waiting.close()
    assert (status, last["outcome"]) == (0, "success")
    assert [e["decision"] for e in waiting.events if e["event"] == "approval_resolved"] == [
        "approve"
    ]
    assert (project / "calc.py").read_text() == FIXED
    assert Path(picture).read_bytes().startswith(b"\x89PNG")
    assert asked["target"] == "calc.py"

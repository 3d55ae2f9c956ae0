"""The fake server's own contract: loopback only, routing, agents, recording, pacing, the CLI."""

from __future__ import annotations

import asyncio
import json
import os
import select
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from ioh_tui.core.errors import ConfigError
from ioh_tui.providers.testing.fake_server import FakeModelServer, run_serve_fake
from tests.fakes import provider_server
from tests.fakes.provider_server import scenario, serving, serving_in_thread

# Exposed here the way a conftest would expose it (`pytest_plugins` lives in the root only).
fake_model_server = provider_server.fake_model_server

REPO = Path(__file__).resolve().parents[3]
GOAL = [{"role": "user", "content": "fix the failing test"}]


def body(messages: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"model": "m", "stream": True, "messages": messages, **extra}


def texts(stream: str) -> str:
    """The text an OpenAI stream carries (enough for checks that are not about the SDK)."""
    out = []
    for line in stream.splitlines():
        if line.startswith("data: {"):
            for choice in json.loads(line[6:]).get("choices", []):
                out.append(choice["delta"].get("content") or "")
    return "".join(out)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.10", "example.com", "127.0.0.2"])
def test_a_non_loopback_host_is_refused(host: str) -> None:
    with pytest.raises(ConfigError, match="loopback"):
        FakeModelServer(scenario(), host=host)


def test_the_cli_refuses_a_non_loopback_host_with_one_line_and_status_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "s.json"
    path.write_text('{"turns": []}')
    assert run_serve_fake(str(path), "openai", "0.0.0.0", 0) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert len(captured.err.strip().splitlines()) == 1
    assert "loopback" in captured.err


def test_the_cli_reports_a_missing_scenario_and_a_busy_port_with_status_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_serve_fake(str(tmp_path / "missing.json"), "openai", "127.0.0.1", 0) == 2
    assert "cannot read scenario" in capsys.readouterr().err
    path = tmp_path / "s.json"
    path.write_text('{"turns": []}')
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        assert run_serve_fake(str(path), "openai", "127.0.0.1", busy.getsockname()[1]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_an_unknown_wire_is_refused() -> None:
    with pytest.raises(ConfigError, match="wire"):
        FakeModelServer(scenario(), wire="gemini")


async def test_localhost_is_served_on_127_0_0_1() -> None:
    async with FakeModelServer(scenario({"text": "hi"}), host="localhost") as server:
        assert server.base_url == f"http://127.0.0.1:{server.port}/v1"
        async with httpx.AsyncClient() as http:
            reply = await http.post(f"{server.base_url}/chat/completions", json=body(GOAL))
    assert texts(reply.text) == "hi"


async def test_ipv6_loopback_works_when_the_machine_has_it() -> None:
    if not socket.has_ipv6:
        pytest.skip("no IPv6 here")
    try:
        server = FakeModelServer(scenario({"text": "hi"}), host="::1")
        await server.start()
    except OSError:
        pytest.skip("::1 cannot be bound here")
    try:
        assert server.url.startswith("http://[::1]:")
        async with httpx.AsyncClient() as http:
            reply = await http.post(f"{server.url}/chat/completions", json=body(GOAL))
        assert texts(reply.text) == "hi"
    finally:
        await server.close()


async def test_requests_are_recorded_without_credentials() -> None:
    async with (
        serving(scenario({"text": "hi"}), "anthropic") as server,
        httpx.AsyncClient() as http,
    ):
        await http.post(
            f"{server.base_url}/v1/messages",
            json=body(GOAL, max_tokens=5),
            headers={"x-api-key": "sk-ant-1", "Authorization": "Bearer sk-2", "X-Trace": "t"},
        )
    (seen,) = server.requests
    assert (seen.method, seen.path, seen.served) == ("POST", "/v1/messages", "answer")
    assert seen.headers["x-api-key"] == seen.headers["authorization"] == "<redacted>"
    assert seen.headers["x-trace"] == "t"
    assert seen.body["messages"] == GOAL
    assert "sk-" not in repr(seen)


async def test_the_anthropic_wire_sends_a_ping_and_named_events() -> None:
    async with (
        serving(scenario({"text": "hi"}), "anthropic") as server,
        httpx.AsyncClient() as http,
    ):
        reply = await http.post(f"{server.base_url}/v1/messages", json=body(GOAL, max_tokens=5))
    events = [line[7:] for line in reply.text.splitlines() if line.startswith("event: ")]
    assert events[:2] == ["message_start", "ping"]
    assert reply.headers["content-type"].startswith("text/event-stream")
    assert reply.headers["transfer-encoding"] == "chunked"


async def test_routes_methods_and_bodies_are_checked_without_using_up_a_turn() -> None:
    script = scenario({"text": "hi", "errors": [{"status": 500}]})
    async with serving(script) as server, httpx.AsyncClient(base_url=server.url) as http:
        missing = await http.post("/v1/messages", json=body(GOAL))
        wrong_method = await http.get("/v1/chat/completions")
        not_json = await http.post("/v1/chat/completions", content=b"{oops")
        not_streaming = await http.post("/v1/chat/completions", json={"messages": GOAL})
        models = await http.get("/v1/models")
        first = await http.post("/chat/completions", json=body(GOAL))
    assert missing.status_code == 404
    assert missing.json()["error"]["type"] == "invalid_request_error"
    assert wrong_method.status_code == 405
    assert not_json.status_code == 400
    assert not_streaming.status_code == 400
    assert [m["id"] for m in models.json()["data"]] == ["fake-model"]
    assert first.status_code == 500, "the scripted error is still the first one served"
    assert first.json()["error"]["type"] == "server_error"


async def test_sub_agents_are_chosen_by_a_goal_substring_with_their_own_error_counts() -> None:
    script = scenario(
        {"text": "root answer", "errors": [{"status": 503}]},
        agents={
            "count the lines": {"turns": [{"text": "counted", "errors": [{"status": 500}]}]},
            "outer": {
                "turns": [{"text": "outer"}],
                "agents": {"inner job": {"turns": [{"text": "deep"}]}},
            },
        },
    )

    async def ask(http: httpx.AsyncClient, goal: str) -> httpx.Response:
        messages = [{"role": "system", "content": "sys"}, {"role": "user", "content": goal}]
        return await http.post("/v1/chat/completions", json=body(messages))

    async with serving(script) as server, httpx.AsyncClient(base_url=server.url) as http:
        sub_failed = await ask(http, "please count the lines of a.py")
        sub = await ask(http, "please count the lines of a.py")
        root_failed = await ask(http, "fix the failing test")
        root = await ask(http, "fix the failing test")
        nested = await ask(http, "do the inner job now")
    assert (sub_failed.status_code, texts(sub.text)) == (500, "counted")
    assert (root_failed.status_code, texts(root.text)) == (503, "root answer")
    assert texts(nested.text) == "deep"
    assert [r.agent for r in server.requests] == [
        "count the lines",
        "count the lines",
        "",
        "",
        "inner job",
    ]


async def test_delay_ms_holds_back_the_first_byte() -> None:
    script = scenario({"text": "slow", "delay_ms": 150})
    async with serving(script) as server, httpx.AsyncClient(base_url=server.url) as http:
        started = time.monotonic()
        async with http.stream("POST", "/v1/chat/completions", json=body(GOAL)) as reply:
            waited = time.monotonic() - started
            await reply.aread()
    assert waited >= 0.14


async def test_http_1_0_gets_a_close_delimited_stream() -> None:
    async with serving(scenario({"text": "hi"})) as server:
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        payload = json.dumps(body(GOAL)).encode()
        writer.write(
            b"POST /v1/chat/completions HTTP/1.0\r\nContent-Length: %d\r\n\r\n%s"
            % (len(payload), payload)
        )
        raw = await asyncio.wait_for(reader.read(), 5)
        writer.close()
    head, _, stream = raw.decode().partition("\r\n\r\n")
    assert "Transfer-Encoding" not in head
    assert "Connection: close" in head
    assert texts(stream) == "hi"
    assert stream.endswith("data: [DONE]\n\n")


async def test_closing_the_server_ends_a_stream_in_progress_promptly() -> None:
    script = scenario({"text": "never sent", "delay_ms": 10_000})
    async with httpx.AsyncClient(timeout=5) as http:
        async with serving(script) as server:
            pending = asyncio.create_task(
                http.post(f"{server.base_url}/chat/completions", json=body(GOAL))
            )
            for _ in range(500):
                if server.requests:
                    break
                await asyncio.sleep(0.01)
            assert server.requests, "the request arrived"
            started = time.monotonic()
        assert time.monotonic() - started < 1
        with pytest.raises(httpx.TransportError):
            await pending


async def test_the_fixture_starts_servers_and_closes_them_after(
    fake_model_server: Callable[..., Awaitable[FakeModelServer]],
) -> None:
    one = await fake_model_server({"turns": [{"text": "one"}]})
    two = await fake_model_server(scenario({"text": "two"}), wire="anthropic")
    async with httpx.AsyncClient() as http:
        reply = await http.post(f"{one.base_url}/chat/completions", json=body(GOAL))
    assert texts(reply.text) == "one"
    assert two.base_url != one.base_url
    assert two.base_url.endswith(str(two.port))


def test_a_server_in_a_thread_serves_synchronous_clients() -> None:
    with serving_in_thread(scenario({"text": "from a thread"})) as server:
        reply = httpx.post(f"{server.base_url}/chat/completions", json=body(GOAL), timeout=5)
    assert texts(reply.text) == "from a thread"


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT])
def test_the_cli_prints_where_it_listens_serves_and_exits_0_when_stopped(
    tmp_path: Path, stop: signal.Signals
) -> None:
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps({"model": "cli-model", "turns": [{"text": "over the wire"}]}))
    code = (
        "import sys\n"
        "from ioh_tui.providers.testing.fake_server import run_serve_fake\n"
        f"sys.exit(run_serve_fake({str(path)!r}, 'openai', '127.0.0.1', 0))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    with subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    ) as process:
        assert process.stdout is not None
        ready, _, _ = select.select([process.stdout], [], [], 15)
        assert ready, "no line within 15 s"
        line = process.stdout.readline().decode()
        try:
            assert line.startswith("listening on http://127.0.0.1:")
            url = line.split()[-1]
            reply = httpx.post(f"{url}/v1/chat/completions", json=body(GOAL), timeout=5)
            assert texts(reply.text) == "over the wire"
        finally:
            process.send_signal(stop)
            rest, errors = process.communicate(timeout=10)
    assert process.returncode == 0
    assert rest == b"", "nothing but the one line on stdout"
    assert errors == b""

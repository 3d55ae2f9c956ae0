"""Stream ingest rate: our client vs the openai SDK's accumulator vs a bare httpx line loop.

The same 20,000-chunk chat-completions stream is served from a loopback server (stdlib, written
in 16 KiB blocks so the client, not the server, is the bottleneck). Each consumer is run a few
times (ours and the bare loop in turns) and its best rate kept; the figures and ratios printed
come from one run of this script. It asserts nothing.

    .venv/bin/python benchmarks/bench_stream_ingest.py
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Awaitable, Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx

from ioh_tui.core.transcript import Message, Request, StreamPiece
from ioh_tui.providers import OpenAI

CHUNKS = 20_000
ROUNDS = 3
BLOCK = 16 * 1024


def build_stream(count: int = CHUNKS) -> bytes:
    """A realistic stream: role chunk, `count` content chunks, finish, usage, [DONE]."""

    def event(delta: dict[str, Any], finish: str | None = None) -> str:
        body = {
            "id": "chatcmpl-bench",
            "object": "chat.completion.chunk",
            "created": 1700000000,
            "model": "bench-model",
            "system_fingerprint": "fp_bench",
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
            "usage": None,
        }
        return f"data: {json.dumps(body)}\n\n"

    parts = [event({"role": "assistant", "content": ""})]
    parts += [event({"content": f"tok{i % 97} "}) for i in range(count)]
    parts.append(event({}, "stop"))
    usage = {"prompt_tokens": 10, "completion_tokens": count, "total_tokens": count + 10}
    parts.append(f"data: {json.dumps({'id': 'x', 'choices': [], 'usage': usage})}\n\n")
    parts.append("data: [DONE]\n\n")
    return "".join(parts).encode()


def serve(body: bytes) -> ThreadingHTTPServer:
    """A loopback server answering every POST with `body`, chunked."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length") or 0))
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            try:
                for start in range(0, len(body), BLOCK):
                    block = body[start : start + BLOCK]
                    self.wfile.write(f"{len(block):x}\r\n".encode() + block + b"\r\n")
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


async def ours(url: str) -> int:
    """Our OpenAI provider, pieces counted through `on_piece`."""
    pieces: list[StreamPiece] = []
    provider = OpenAI(base_url=f"{url}/v1", api_key="bench", model="bench-model", max_retries=0)
    try:
        request = Request(messages=(Message("user", "go"),))
        await provider.complete(request, on_piece=pieces.append)
    finally:
        await provider.aclose()
    return len(pieces)


async def sdk(url: str) -> int:
    """The openai SDK's async stream fed to its own accumulator."""
    import openai
    from openai.lib.streaming.chat import ChatCompletionStreamState

    client = openai.AsyncOpenAI(base_url=f"{url}/v1", api_key="bench", max_retries=0)
    state: Any = ChatCompletionStreamState()
    count = 0
    async with client:
        stream = await client.chat.completions.create(
            model="bench-model",
            messages=[{"role": "user", "content": "go"}],
            stream=True,
            stream_options={"include_usage": True},
        )
        async for chunk in stream:
            state.handle_chunk(chunk)
            count += 1
    state.get_final_completion()
    return count


async def bare(url: str) -> int:
    """httpx `aiter_lines`, counting `data:` lines: no SSE rules, no JSON."""
    count = 0
    async with (
        httpx.AsyncClient() as client,
        client.stream("POST", f"{url}/v1/chat/completions", json={"stream": True}) as response,
    ):
        async for line in response.aiter_lines():
            if line.startswith("data:"):
                count += 1
    return count


async def rate(consume: Callable[[str], Awaitable[int]], url: str) -> float:
    """Chunks per second of one run."""
    started = time.perf_counter()
    await consume(url)
    return CHUNKS / (time.perf_counter() - started)


async def measure(url: str) -> dict[str, float]:
    """Rates of every consumer that can run here, each the best of `ROUNDS` runs.

    Ours and the bare loop take turns, round by round, so that both see the same load on a
    shared machine (run one after the other, the bare loop's own rate moved fivefold).
    """
    rates = {"ioh-tui client": 0.0, "bare httpx line loop": 0.0}
    for _ in range(ROUNDS):
        rates["ioh-tui client"] = max(rates["ioh-tui client"], await rate(ours, url))
        rates["bare httpx line loop"] = max(rates["bare httpx line loop"], await rate(bare, url))
    try:
        rates["openai SDK accumulator"] = max([await rate(sdk, url) for _ in range(ROUNDS)])
    except ImportError:
        print("openai SDK not installed: its figure is skipped")
    return rates


def main() -> None:
    """Serve the stream, measure, print chunks/s and ratios."""
    body = build_stream()
    server = serve(body)
    host, port = server.server_address[:2]
    url = f"http://{host!s}:{port}"
    try:
        rates = asyncio.run(measure(url))
    finally:
        server.shutdown()
        server.server_close()
    print(f"stream: {CHUNKS} content chunks, {len(body) / 1e6:.1f} MB, best of {ROUNDS}")
    for name, rate in rates.items():
        print(f"  {name:<24} {rate:>10,.0f} chunks/s")
    ours_rate = rates["ioh-tui client"]
    for name, rate in rates.items():
        if name != "ioh-tui client":
            print(f"  ioh-tui / {name}: {ours_rate / rate:.2f}x")
    bare_rate = rates["bare httpx line loop"]
    print(
        f"table | stream ingest, {CHUNKS:,} chunks on loopback | {bare_rate / ours_rate:.2f}x the"
        f" bare loop's time ({ours_rate:,.0f} vs {bare_rate:,.0f} chunks/s) | a bare httpx line"
        " loop | ≤ 1.2x"
    )


if __name__ == "__main__":
    main()

"""Streaming through the app: 20,000 tokens shown live vs the same run headless, and loop lag.

One model turn streams TOKENS text pieces, yielding to the event loop after each (as a network
stream does). The headless run is the engine alone with a no-op observer; the app run is the same
engine inside `IohApp` (headless Textual), timed until the screen has handled `run_finished` and
flushed its Markdown streams. While the app streams, a probe task sleeps PROBE_S at a time and
records how late it wakes: that lateness is the event loop's lag (what a keypress would wait).
Prints figures; asserts nothing.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ioh_tui.core.events import Event  # noqa: E402
from ioh_tui.core.transcript import (  # noqa: E402
    AttemptSink,
    Completion,
    Request,
    StreamSink,
    TextPiece,
    Usage,
)
from ioh_tui.engine import RunResult, TaskContract, run  # noqa: E402
from ioh_tui.sandbox import select  # noqa: E402
from ioh_tui.store import Store  # noqa: E402

TOKENS = 20_000
PROBE_S = 0.005
WORDS = ["the ", "quick ", "**brown** ", "fox ", "jumps ", "over ", "`lazy` ", "dogs.\n\n"]


class TokenStream:
    """A model that streams TOKENS pieces of Markdown, then stops calling tools."""

    def __init__(self) -> None:
        self.text = "".join(WORDS[i % len(WORDS)] for i in range(TOKENS))

    @property
    def name(self) -> str:
        return "bench"

    @property
    def model(self) -> str | None:
        return "token-stream"

    async def complete(
        self,
        request: Request,
        *,
        on_piece: StreamSink | None = None,
        on_attempt: AttemptSink | None = None,
        deadline: float | None = None,
    ) -> Completion:
        for i in range(TOKENS):
            if on_piece is not None:
                on_piece(TextPiece(WORDS[i % len(WORDS)]))
            await asyncio.sleep(0)
        return Completion(text=self.text, usage=Usage(1000, TOKENS))

    async def aclose(self) -> None:
        return None


def contract(root: Path) -> TaskContract:
    return TaskContract.workspace("stream a long answer", root).with_max_steps(1)


async def headless(root: Path, db: Path) -> tuple[float, RunResult]:
    def ignore(event: Event) -> None:
        return None

    started = time.perf_counter()
    async with Store.open(db) as store:
        result = await run(contract(root), TokenStream(), store=store, sandbox=select("floor"), observers=[ignore])
    return time.perf_counter() - started, result


async def probe(lags: list[float], stop: asyncio.Event) -> None:
    loop = asyncio.get_running_loop()
    while not stop.is_set():
        before = loop.time()
        await asyncio.sleep(PROBE_S)
        lags.append(max(0.0, loop.time() - before - PROBE_S))


async def in_app(root: Path, db: Path) -> tuple[float, list[float], int]:
    from ioh_tui.tui.factory import make_app

    app = make_app(db, mode="run", contract=contract(root), provider=TokenStream(), sandbox=select("floor"))
    app.animation_level = "none"
    lags: list[float] = []
    stop = asyncio.Event()
    async with app.run_test(size=(120, 40)) as pilot:
        started = time.perf_counter()
        prober = asyncio.create_task(probe(lags, stop))
        while app.run_screen is None or app.run_screen.outcome is None:
            await asyncio.sleep(0.01)
        elapsed = time.perf_counter() - started
        stop.set()
        await prober
        events = app.run_screen.events_seen
        await pilot.pause()
    return elapsed, lags, events


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else 0.0


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="bench-tui-") as tmp:
        root = Path(tmp) / "ws"
        root.mkdir()
        base, result = asyncio.run(headless(root, Path(tmp) / "headless.db"))
        shown, lags, events = asyncio.run(in_app(root, Path(tmp) / "app.db"))
    print(f"tokens streamed:        {TOKENS:,} (outcome {result.outcome})")
    print(f"headless run:           {base:.2f} s ({TOKENS / base:,.0f} tokens/s)")
    print(f"in the app:             {shown:.2f} s ({TOKENS / shown:,.0f} tokens/s, {events:,} events handled)")
    print(f"app / headless:         {shown / base:.2f}x")
    print(
        f"event-loop lag (app):   p50 {percentile(lags, 0.5) * 1000:.1f} ms, "
        f"p99 {percentile(lags, 0.99) * 1000:.1f} ms, max {max(lags, default=0) * 1000:.1f} ms "
        f"({len(lags)} probes, mean {statistics.fmean(lags) * 1000 if lags else 0:.1f} ms)"
    )


if __name__ == "__main__":
    main()

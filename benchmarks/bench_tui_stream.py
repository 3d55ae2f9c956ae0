"""Streaming through the app: 20,000 tokens shown live vs the same run headless, and loop lag.

One model turn streams TOKENS text pieces, yielding to the event loop after each (as a network
stream does). The headless run is the engine alone with a no-op observer; the app run is the same
engine inside `IohApp` (headless Textual), timed until the screen has handled `run_finished` and
flushed its Markdown streams. While the app streams, a probe task sleeps PROBE_S at a time and
records how late it wakes: that lateness is the event loop's lag (what a keypress would wait).
It counts the screen's layout passes too (`Screen._refresh_layout`, each a walk of every widget).
Prints figures; asserts nothing.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ioh_tui.core.events import Event
from ioh_tui.core.transcript import (
    AttemptSink,
    Completion,
    Request,
    StreamSink,
    TextPiece,
    Usage,
)
from ioh_tui.engine import RunResult, TaskContract, run
from ioh_tui.sandbox import select
from ioh_tui.store import Store

TOKENS = 20_000
PROBE_S = 0.005
PACED_TOKENS = 2_000
PACED_RATE = 400.0
"""A fast real model's pace (tokens a second), for the lag a person feels while it streams."""
SENTENCE = ["The ", "quick ", "**brown** ", "fox ", "jumps ", "over ", "the ", "`lazy` ", "dog. "]
WORDS = SENTENCE * 6 + ["\n\n"]
"""About 55 tokens a paragraph, with inline Markdown, like a model's prose."""


class TokenStream:
    """A model that streams `tokens` pieces of Markdown, then stops calling tools.

    `rate` (tokens a second) paces it like a real model; None streams as fast as the loop allows.
    """

    def __init__(self, tokens: int = TOKENS, rate: float | None = None) -> None:
        self.tokens = tokens
        self.rate = rate
        self.text = "".join(WORDS[i % len(WORDS)] for i in range(tokens))

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
        max_retries: int | None = None,
    ) -> Completion:
        for i in range(self.tokens):
            if on_piece is not None:
                on_piece(TextPiece(WORDS[i % len(WORDS)]))
            if self.rate is None:
                await asyncio.sleep(0)
            elif i % 10 == 9:
                await asyncio.sleep(10 / self.rate)
        return Completion(text=self.text, usage=Usage(1000, self.tokens))

    async def aclose(self) -> None:
        return None


def contract(root: Path) -> TaskContract:
    """One turn: the model calls no tool, so the run ends after it.

    No one-step budget: the app offers to raise a step budget from 80 % of it, and the engine
    holds the next model call for the answer (up to two minutes, `engine/budgets.OFFER_WAIT_S`).
    A one-step budget is offered before the only call, which then waited out the whole hold.
    """
    return TaskContract.workspace("stream a long answer", root)


async def headless(root: Path, db: Path) -> tuple[float, RunResult]:
    def ignore(event: Event) -> None:
        return None

    started = time.perf_counter()
    async with Store.open(db) as store:
        result = await run(
            contract(root), TokenStream(), store=store, sandbox=select("floor"), observers=[ignore]
        )
    return time.perf_counter() - started, result


async def probe(lags: list[float], stop: asyncio.Event) -> None:
    loop = asyncio.get_running_loop()
    while not stop.is_set():
        before = loop.time()
        await asyncio.sleep(PROBE_S)
        lags.append(max(0.0, loop.time() - before - PROBE_S))


async def in_app(root: Path, db: Path, model: TokenStream) -> tuple[float, list[float], int, int]:
    from textual.geometry import Size
    from textual.message import Message
    from textual.screen import Screen

    from ioh_tui.engine import NewRun
    from ioh_tui.tui.app_run import AppRun
    from ioh_tui.tui.factory import make_app
    from ioh_tui.tui.messages import EngineEventMessage

    run = AppRun(NewRun(contract(root)), model, sandbox=select("floor"))
    app = make_app(db, run)
    app.animation_level = "none"
    lags: list[float] = []
    stop = asyncio.Event()
    messages: dict[int, Message] = {}  # held, so that no id is reused

    def count(message: Message) -> None:
        # The engine's events as the run screen takes them (the app keeps no count of its own);
        # the hook sees a message at each pump that handles it, so each is counted once.
        if isinstance(message, EngineEventMessage):
            messages[id(message)] = message

    passes = 0
    layout = Screen._refresh_layout

    def counted(screen: Screen[Any], size: Size | None = None, scroll: bool = False) -> None:
        nonlocal passes
        passes += 1
        layout(screen, size, scroll)

    async with app.run_test(size=(120, 40), message_hook=count) as pilot:
        Screen._refresh_layout = counted  # type: ignore[method-assign,assignment]
        started = time.perf_counter()
        prober = asyncio.create_task(probe(lags, stop))
        await app.workers.wait_for_complete()
        while app.run_screen is None or app.run_screen.outcome is None:
            await pilot.pause(0.01)  # the screen is still draining its queue of events
        elapsed = time.perf_counter() - started
        Screen._refresh_layout = layout  # type: ignore[method-assign]
        stop.set()
        await prober
        await pilot.pause()
    return elapsed, lags, len(messages), passes


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else 0.0


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="bench-tui-") as tmp:
        root = Path(tmp) / "ws"
        root.mkdir()
        base, result = asyncio.run(headless(root, Path(tmp) / "headless.db"))
        shown, lags, events, passes = asyncio.run(in_app(root, Path(tmp) / "app.db", TokenStream()))
        paced_s, paced, _, _ = asyncio.run(
            in_app(root, Path(tmp) / "paced.db", TokenStream(PACED_TOKENS, PACED_RATE))
        )
    print(f"tokens streamed:        {TOKENS:,} (outcome {result.outcome})")
    print(f"headless run:           {base:.2f} s ({TOKENS / base:,.0f} tokens/s)")
    print(
        f"in the app:             {shown:.2f} s ({TOKENS / shown:,.0f} tokens/s,"
        f" {events:,} messages to the screen, {passes} layout passes)"
    )
    print(f"app / headless:         {shown / base:.1f}x")
    print(f"loop lag, flat out:     {lag(lags)}")
    print(f"loop lag, {PACED_RATE:.0f} tok/s:    {lag(paced)} (run took {paced_s:.2f} s)")
    print(
        f"table | app vs headless, {TOKENS:,} streamed tokens | {shown / base:.1f}x, loop lag p99"
        f" {percentile(lags, 0.99) * 1000:.0f} ms | headless ({base:.2f} s) | ≤ 3x, lag p99 ≤ 30 ms"
    )


def lag(values: list[float]) -> str:
    """p50 / p99 / max of probe lateness, in milliseconds."""
    mean = statistics.fmean(values) * 1000 if values else 0.0
    return (
        f"p50 {percentile(values, 0.5) * 1000:.1f} ms, p99 {percentile(values, 0.99) * 1000:.1f} ms,"
        f" max {max(values, default=0) * 1000:.1f} ms ({len(values)} probes, mean {mean:.1f} ms)"
    )


if __name__ == "__main__":
    main()

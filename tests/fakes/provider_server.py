"""Test helpers around `FakeModelServer`: inline scenarios, a server per test, or one in a thread.

`serving(...)` runs the server on the test's own event loop (async tests); `serving_in_thread(...)`
gives it a loop of its own, for synchronous clients and for code that blocks the test's loop.
`fake_model_server` is a fixture factory; expose it with `pytest_plugins` in a conftest.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from ioh_tui.providers.testing.fake_server import FakeModelServer
from ioh_tui.providers.testing.scenario import Scenario, parse_scenario

ScenarioLike = Scenario | Mapping[str, Any] | str | Path


def scenario(
    *turns: Mapping[str, Any],
    agents: Mapping[str, Mapping[str, Any]] | None = None,
    model: str = "fake-model",
) -> Scenario:
    """A checked scenario from turn objects written as in a scenario file."""
    return parse_scenario({"model": model, "turns": list(turns), "agents": dict(agents or {})})


def _as_scenario(value: ScenarioLike) -> Scenario | str | Path:
    if isinstance(value, Mapping):
        return parse_scenario(dict(value))
    return value


@contextlib.asynccontextmanager
async def serving(script: ScenarioLike, wire: str = "openai") -> AsyncIterator[FakeModelServer]:
    """Run a fake server on the current loop for the length of the block."""
    async with FakeModelServer(_as_scenario(script), wire=wire) as server:
        yield server


@contextlib.contextmanager
def serving_in_thread(script: ScenarioLike, wire: str = "openai") -> Iterator[FakeModelServer]:
    """Run a fake server on its own loop in a daemon thread; stopped and joined on exit."""
    server = FakeModelServer(_as_scenario(script), wire=wire)
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    stop: asyncio.Event | None = None
    failure: list[BaseException] = []

    async def main() -> None:
        nonlocal stop
        stop = asyncio.Event()
        try:
            async with server:
                ready.set()
                await stop.wait()
        except BaseException as exc:
            failure.append(exc)
            ready.set()

    thread = threading.Thread(target=loop.run_until_complete, args=(main(),), daemon=True)
    thread.start()
    ready.wait(10)
    try:
        if failure:
            raise failure[0]
        yield server
    finally:
        if stop is not None:
            loop.call_soon_threadsafe(stop.set)
        thread.join(10)
        loop.close()


@pytest.fixture
async def fake_model_server() -> AsyncIterator[Callable[..., Awaitable[FakeModelServer]]]:
    """A factory: `server = await fake_model_server(scenario, wire=...)`, closed after the test."""
    async with contextlib.AsyncExitStack() as stack:

        async def start(script: ScenarioLike, wire: str = "openai") -> FakeModelServer:
            return await stack.enter_async_context(serving(script, wire))

        yield start

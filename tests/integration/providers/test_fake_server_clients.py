"""Our own wire clients against the fake server: the scripted model's answers and failures."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

try:
    from ioh_tui.providers import Anthropic, Compatible, OpenAI
    from ioh_tui.providers.registry import make_provider
except ImportError:  # pragma: no cover - the wire clients land separately
    pytest.skip("the wire clients are not importable yet", allow_module_level=True)

from ioh_tui.core.errors import ProviderError
from ioh_tui.core.transcript import Attempt, Message, Request, StreamPiece, ToolCall
from ioh_tui.providers.base import Provider
from ioh_tui.providers.fallback import Fallback
from ioh_tui.providers.testing.fake_server import FakeModelServer
from ioh_tui.providers.testing.scenario import Scenario
from ioh_tui.providers.testing.scripted import ScriptedProvider
from tests.fakes.provider_server import scenario, serving

READ = {"name": "read_file", "arguments": {"path": "calc.py", "start_line": 1}}
ANSWER = {
    "thinking": "The sign is wrong.",
    "text": "Reading calc.py to confirm the bug.",
    "tool_calls": [READ, {"name": "grep", "arguments": {"pattern": "a - b"}}],
}
REQUEST = Request(
    (
        Message("system", "You are careful."),
        Message("user", "fix the failing test"),
    )
)
LATER = Request(
    (
        *REQUEST.messages,
        Message("assistant", "Looking.", (ToolCall("call_0_0", "list_dir", {"path": "."}),)),
        Message("tool", "calc.py\ncheck_calc.py", tool_call_id="call_0_0"),
    )
)


class Waits:
    """A sleep that records how long it was asked to wait and returns at once."""

    def __init__(self) -> None:
        self.seconds: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.seconds.append(seconds)


Factory = Callable[[FakeModelServer, int, Waits], Provider]


def openai_client(server: FakeModelServer, retries: int, waits: Waits) -> Provider:
    return OpenAI(
        base_url=server.base_url, api_key="sk-x", model="m", max_retries=retries, sleep=waits
    )


def compatible_client(server: FakeModelServer, retries: int, waits: Waits) -> Provider:
    return Compatible(base_url=server.base_url, model="m", max_retries=retries, sleep=waits)


def anthropic_client(server: FakeModelServer, retries: int, waits: Waits) -> Provider:
    return Anthropic(
        base_url=server.base_url, api_key="sk-x", model="m", max_retries=retries, sleep=waits
    )


CLIENTS = [
    pytest.param("openai", openai_client, id="openai"),
    pytest.param("openai", compatible_client, id="compatible"),
    pytest.param("anthropic", anthropic_client, id="anthropic"),
]


async def ask(
    script: Scenario, wire: str, factory: Factory, request: Request = REQUEST, retries: int = 2
) -> tuple[Any, FakeModelServer, Waits, list[Attempt]]:
    """One `complete` through our client; returns the completion or the error raised."""
    waits, attempts = Waits(), list[Attempt]()
    async with serving(script, wire) as server:
        provider = factory(server, retries, waits)
        try:
            outcome: Any = await provider.complete(request, on_attempt=attempts.append)
        except ProviderError as error:
            outcome = error
        finally:
            await provider.aclose()
    return outcome, server, waits, attempts


@pytest.mark.parametrize(("wire", "factory"), CLIENTS)
async def test_our_client_assembles_what_the_scripted_model_answers(
    wire: str, factory: Factory
) -> None:
    script = scenario({"text": "Listing."}, ANSWER)
    pieces: list[StreamPiece] = []
    expected = await ScriptedProvider(script).complete(LATER)
    waits = Waits()
    async with serving(script, wire) as server:
        provider = factory(server, 0, waits)
        got = await provider.complete(LATER, on_piece=pieces.append)
        await provider.aclose()
    assert (got.text, got.thinking) == (expected.text, expected.thinking)
    assert [(c.id, c.name, dict(c.arguments)) for c in got.tool_calls] == [
        (c.id, c.name, dict(c.arguments)) for c in expected.tool_calls
    ]
    assert got.usage is not None
    assert expected.usage is not None
    assert (got.usage.input_tokens, got.usage.output_tokens) == (
        expected.usage.input_tokens,
        expected.usage.output_tokens,
    )
    assert got.stop_reason in ("tool_calls", "tool_use")
    assert got.model == "fake-model"
    assert len(pieces) > 4, "the answer streamed in pieces"
    assert server.requests[0].turn == 1


@pytest.mark.parametrize(("wire", "factory"), CLIENTS)
async def test_a_429_with_retry_after_then_success_costs_exactly_two_requests(
    wire: str, factory: Factory
) -> None:
    script = scenario({**ANSWER, "errors": [{"status": 429, "retry_after_s": 3}]})
    outcome, server, waits, attempts = await ask(script, wire, factory)
    assert outcome.text == ANSWER["text"]
    assert len(server.requests) == 2
    assert waits.seconds == [3.0], "Retry-After is honoured"
    assert [a.failure for a in attempts] == ["rate_limited (HTTP 429)", None]


@pytest.mark.parametrize(("wire", "factory"), CLIENTS)
async def test_a_401_costs_exactly_one_request_and_is_auth(wire: str, factory: Factory) -> None:
    outcome, server, waits, _ = await ask(
        scenario({**ANSWER, "errors": [{"status": 401}]}), wire, factory
    )
    assert isinstance(outcome, ProviderError)
    assert (outcome.kind, outcome.status, outcome.retryable) == ("auth", 401, False)
    assert len(server.requests) == 1
    assert waits.seconds == []


@pytest.mark.parametrize(("wire", "factory"), CLIENTS)
async def test_repeated_500s_exhaust_the_retries(wire: str, factory: Factory) -> None:
    script = scenario({**ANSWER, "errors": [{"status": 500}] * 3})
    outcome, server, waits, _ = await ask(script, wire, factory, retries=2)
    assert isinstance(outcome, ProviderError)
    assert (outcome.kind, outcome.status) == ("server", 500)
    assert len(server.requests) == 3
    assert len(waits.seconds) == 2


@pytest.mark.parametrize(("wire", "factory"), CLIENTS)
async def test_a_disconnect_is_a_transport_error_and_is_retried(
    wire: str, factory: Factory
) -> None:
    script = scenario({**ANSWER, "errors": [{"disconnect_after_chunks": 2}]})
    outcome, server, _, attempts = await ask(script, wire, factory)
    assert outcome.text == ANSWER["text"]
    assert [r.served for r in server.requests] == ["disconnect", "answer"]
    assert attempts[0].failure is not None
    assert attempts[0].failure.startswith("transport")


@pytest.mark.parametrize(("wire", "factory"), CLIENTS)
@pytest.mark.parametrize(
    ("message", "kind"), [("upstream fell over", "server"), ("Overloaded", "overloaded")]
)
async def test_a_mid_stream_error_is_classified_by_its_type_and_retried(
    wire: str, factory: Factory, message: str, kind: str
) -> None:
    # The events carry the vendors' real types (OpenAI `server_error`, or OpenRouter's code 529
    # for overload; Anthropic `api_error`, or `overloaded_error`), which our clients classify.
    script = scenario({**ANSWER, "errors": [{"stream_error": message}]})
    failed, _, _, _ = await ask(script, wire, factory, retries=0)
    assert isinstance(failed, ProviderError)
    assert failed.kind == kind
    with pytest.raises(ProviderError) as in_process:
        await ScriptedProvider(script, max_retries=0).complete(REQUEST)
    assert in_process.value.kind == failed.kind  # the same failure in-process as over the wire
    assert failed.retryable
    assert message in str(failed)
    recovered, server, _, _ = await ask(script, wire, factory, retries=1)
    assert recovered.text == ANSWER["text"]
    assert [r.served for r in server.requests] == ["stream_error", "answer"]


async def test_make_provider_reaches_the_fake_server_and_falls_over_between_two() -> None:
    down = scenario({**ANSWER, "errors": [{"status": 503, "retry_after_s": 0}] * 2})
    async with serving(down) as primary, serving(scenario(ANSWER), "anthropic") as secondary:
        chain = Fallback(
            [
                make_provider("compatible", base_url=primary.base_url, model="m", max_retries=1),
                make_provider(
                    "anthropic",
                    base_url=secondary.base_url,
                    api_key="sk-x",
                    model="m",
                    max_retries=0,
                ),
            ]
        )
        try:
            answer = await chain.complete(REQUEST)
        finally:
            await chain.aclose()
    assert answer.text == ANSWER["text"]
    assert chain.last_served == "anthropic"
    assert chain.name == "compatible -> anthropic"
    assert (len(primary.requests), len(secondary.requests)) == (2, 1)

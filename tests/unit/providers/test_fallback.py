"""Fallback: the next provider answers only when one fails in a way another could fix."""

from __future__ import annotations

import time
from typing import Any

import pytest

from ioh_tui.core.control import BudgetExhausted
from ioh_tui.core.errors import ProviderError
from ioh_tui.core.transcript import Attempt, Message, Request, StreamPiece, TextPiece
from ioh_tui.providers.base import Provider
from ioh_tui.providers.fallback import FALLBACK_TO, Fallback
from ioh_tui.providers.retry import RetryPolicy
from ioh_tui.providers.testing.scenario import parse_scenario
from ioh_tui.providers.testing.scripted import ScriptedProvider
from tests.fakes.provider_server import scenario

REQUEST = Request((Message("user", "fix the failing test"),))


async def no_wait(_: float) -> None:
    return None


def scripted(
    name: str, *errors: dict[str, Any], text: str = "", retries: int = 2
) -> ScriptedProvider:
    turn: dict[str, Any] = {"text": text or f"{name} answers", "errors": list(errors)}
    return ScriptedProvider(scenario(turn), name=name, max_retries=retries, sleep=no_wait)


def test_the_name_is_the_chain() -> None:
    chain = Fallback([scripted("openrouter"), scripted("anthropic"), scripted("local")])
    assert chain.name == "openrouter -> anthropic -> local"
    assert chain.last_served is None


def test_an_empty_chain_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one"):
        Fallback([])


async def test_the_primary_answers_and_the_secondary_is_never_asked() -> None:
    primary, secondary = scripted("a"), scripted("b")
    chain = Fallback([primary, secondary])
    completion = await chain.complete(REQUEST)
    assert completion.text == "a answers"
    assert chain.last_served == "a"
    assert secondary.requests == []


async def test_exhausted_retries_of_a_retryable_kind_fall_over_once() -> None:
    primary = scripted("a", *[{"status": 503}] * 3, retries=2)
    secondary = scripted("b")
    attempts: list[Attempt] = []
    chain = Fallback([primary, secondary])
    completion = await chain.complete(REQUEST, on_attempt=attempts.append)
    assert completion.text == "b answers"
    assert chain.last_served == "b"
    assert chain.model == secondary.model
    assert [(a.provider, a.failure) for a in attempts] == [
        ("a", "overloaded (HTTP 503)"),
        ("a", "overloaded (HTTP 503)"),
        ("a", "overloaded (HTTP 503)"),
        ("b", None),
    ]
    assert len(secondary.requests) == 1


async def test_a_primary_that_recovers_within_its_own_retries_keeps_the_request() -> None:
    primary, secondary = scripted("a", {"status": 500}, retries=2), scripted("b")
    chain = Fallback([primary, secondary])
    assert (await chain.complete(REQUEST)).text == "a answers"
    assert secondary.requests == []


@pytest.mark.parametrize("status", [401, 403, 400, 404])
async def test_non_retryable_failures_do_not_fall_over(status: int) -> None:
    primary, secondary = scripted("a", {"status": status}), scripted("b")
    chain = Fallback([primary, secondary])
    with pytest.raises(ProviderError) as raised:
        await chain.complete(REQUEST)
    assert raised.value.status == status
    assert not raised.value.retryable
    assert secondary.requests == []
    assert chain.last_served is None


def waiting_60s(name: str) -> ScriptedProvider:
    return ScriptedProvider(
        scenario({"text": "late", "errors": [{"status": 429, "retry_after_s": 60}]}),
        name=name,
        retry=RetryPolicy(),
        sleep=no_wait,
    )


async def test_a_retry_past_the_deadline_falls_over_while_time_is_left() -> None:
    # The primary cannot be waited for within the budget, but the secondary can answer now.
    secondary = scripted("b")
    chain = Fallback([waiting_60s("a"), secondary])
    attempts: list[Attempt] = []
    completion = await chain.complete(
        REQUEST, on_attempt=attempts.append, deadline=time.monotonic() + 5
    )
    assert completion.text == "b answers"
    assert [(a.provider, a.failure, a.retry_in_s) for a in attempts] == [
        ("a", "rate_limited (HTTP 429)", None),
        ("b", None, None),
    ]
    assert attempts[0].extra == {FALLBACK_TO: "b"}


async def test_a_retry_past_the_deadline_of_the_last_provider_ends_the_budget() -> None:
    chain = Fallback([scripted("a", *[{"status": 503}] * 3), waiting_60s("b")])
    with pytest.raises(BudgetExhausted):
        await chain.complete(REQUEST, deadline=time.monotonic() + 5)


async def test_nothing_falls_over_once_the_deadline_has_passed() -> None:
    secondary = scripted("b")
    chain = Fallback([waiting_60s("a"), secondary])
    with pytest.raises(BudgetExhausted):
        await chain.complete(REQUEST, deadline=time.monotonic() - 1)
    assert secondary.requests == []


async def test_the_switch_is_marked_before_the_next_provider_streams() -> None:
    seen: list[str] = []
    primary = scripted("a", *[{"status": 503}] * 2, retries=1)
    chain = Fallback(
        [Fallback([primary, scripted("b", {"status": 500}, retries=0)]), scripted("c")]
    )

    def on_attempt(attempt: Attempt) -> None:
        seen.append(f"{attempt.provider}:{attempt.failure}:{attempt.extra.get(FALLBACK_TO)}")

    def on_piece(piece: StreamPiece) -> None:
        seen.append(f"piece {piece}")

    await chain.complete(REQUEST, on_attempt=on_attempt, on_piece=on_piece)
    assert seen[:4] == [
        "a:overloaded (HTTP 503):None",
        "a:overloaded (HTTP 503):b",
        "b:server (HTTP 500):c",
        "piece TextPiece(text='c answers')",
    ]
    assert seen[-1] == "c:None:None"


async def test_the_call_s_max_retries_reaches_every_provider() -> None:
    primary = scripted("a", *[{"status": 503}] * 9, retries=0)
    secondary = scripted("b", *[{"status": 503}] * 4, retries=0)
    attempts: list[Attempt] = []
    chain = Fallback([primary, secondary])
    await chain.complete(REQUEST, on_attempt=attempts.append, max_retries=4)
    assert [a.provider for a in attempts] == ["a"] * 5 + ["b"] * 5


async def test_when_every_provider_fails_the_last_failure_is_raised() -> None:
    chain = Fallback(
        [
            scripted("a", *[{"status": 503}] * 3),
            scripted("b", *[{"status": 500}] * 3),
            scripted("c", *[{"disconnect_after_chunks": 0}] * 3),
        ]
    )
    with pytest.raises(ProviderError) as raised:
        await chain.complete(REQUEST)
    assert raised.value.kind == "transport"


async def test_pieces_stream_from_whoever_answers() -> None:
    primary = scripted("a", *[{"disconnect_after_chunks": 1}] * 3, text="x" * 30)
    secondary = scripted("b", text="from b")
    pieces: list[StreamPiece] = []
    chain = Fallback([primary, secondary])
    await chain.complete(REQUEST, on_piece=pieces.append)
    assert pieces[-1] == TextPiece("from b")
    assert pieces.count(TextPiece("x" * 12)) == 3, "each cut attempt had streamed one piece"


async def test_nested_chains_work_and_aclose_reaches_every_provider() -> None:
    closed: list[str] = []

    class Closing(ScriptedProvider):
        async def aclose(self) -> None:
            closed.append(self.name)
            if self.name == "a":
                raise RuntimeError("a would not close")

    def make(name: str, *errors: dict[str, Any]) -> Provider:
        turn = {"text": f"{name} answers", "errors": list(errors)}
        return Closing(scenario(turn), name=name, max_retries=0, sleep=no_wait)

    inner = Fallback([make("a", {"status": 502}, {"status": 502}), make("b", {"status": 502})])
    chain = Fallback([inner, make("c")])
    assert chain.name == "a -> b -> c"
    assert (await chain.complete(REQUEST)).text == "c answers"
    assert chain.last_served == "c"
    assert (await chain.complete(REQUEST)).text == "b answers", "b's one error was used up"
    assert chain.last_served == "b", "the innermost provider that answered is named"
    with pytest.raises(RuntimeError, match="would not close"):
        await chain.aclose()
    assert closed == ["a", "b", "c"]


async def test_a_sub_agent_gets_each_provider_s_own_script() -> None:
    child = {"turns": [{"text": "the child answers"}]}
    primary = ScriptedProvider(
        parse_scenario({"turns": [{"text": "root"}], "agents": {"child task": child}}), name="a"
    )
    chain = Fallback([primary, scripted("b")]).for_agent("do the child task")
    assert chain.name == "a -> b"
    assert (await chain.complete(REQUEST)).text == "the child answers"

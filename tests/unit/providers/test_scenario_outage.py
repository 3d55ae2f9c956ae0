"""`fail_for_s`: a scripted failure served for a length of time, the same in both doubles."""

from __future__ import annotations

import pytest

from ioh_tui.core.errors import ConfigError, ProviderError
from ioh_tui.core.transcript import Attempt, Message, Request
from ioh_tui.providers.retry import RetryPolicy
from ioh_tui.providers.testing.scenario import ErrorCursor, ScriptedError, parse_scenario
from ioh_tui.providers.testing.scripted import ScriptedProvider

REQUEST = Request((Message("user", "hi"),))


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_lasting_failure_is_served_until_its_time_is_up_then_the_next() -> None:
    clock = Clock()
    cursor = ErrorCursor(clock)
    outage, then = ScriptedError(status=503, fail_for_s=20), ScriptedError(status=429)
    errors = (outage, then)
    served = []
    for at in (0.0, 5.0, 19.9, 20.0, 20.5, 21.0):
        clock.now = 100.0 + at
        served.append(cursor.next(0, errors))
    assert served == [outage, outage, outage, then, None, None]


def test_the_outage_starts_at_the_first_request_it_answers_and_keys_are_apart() -> None:
    clock = Clock()
    cursor = ErrorCursor(clock)
    errors = (ScriptedError(status=429), ScriptedError(status=503, fail_for_s=10))
    assert cursor.next("a", errors) == errors[0]
    clock.now += 50  # a long pause before the next request: the outage has not begun yet
    assert cursor.next("a", errors) == errors[1]
    assert cursor.next("b", errors) == errors[0], "each key counts its own"
    clock.now += 9.9
    assert cursor.next("a", errors) == errors[1]
    clock.now += 0.1
    assert cursor.next("a", errors) is None


def test_the_scenario_reads_fail_for_s_beside_any_failure() -> None:
    parsed = parse_scenario(
        {"turns": [{"text": "x", "errors": [{"status": 503, "fail_for_s": 2.5}, {"status": 500}]}]}
    )
    assert parsed.turns[0].errors == (
        ScriptedError(status=503, fail_for_s=2.5),
        ScriptedError(status=500),
    )


@pytest.mark.parametrize("value", [0, -1, "20", True, None])
def test_a_bad_fail_for_s_is_refused(value: object) -> None:
    turn = {"text": "x", "errors": [{"status": 503, "fail_for_s": value}]}
    if value is None:
        parse_scenario({"turns": [turn]})  # null is the same as absent
        return
    with pytest.raises(ConfigError, match=r"turns\[0\]\.errors\[0\]: fail_for_s must be"):
        parse_scenario({"turns": [turn]})


async def test_the_in_process_double_fails_for_the_time_then_answers() -> None:
    script = parse_scenario(
        {"turns": [{"text": "back", "errors": [{"status": 503, "fail_for_s": 0.3}]}]}
    )
    attempts: list[Attempt] = []
    provider = ScriptedProvider(script, retry=RetryPolicy(base_s=0.05, max_s=0.1), max_retries=20)
    completion = await provider.complete(REQUEST, on_attempt=attempts.append)
    assert completion.text == "back"
    failed = [a for a in attempts if a.failure is not None]
    assert {a.failure for a in failed} == {"overloaded (HTTP 503)"}
    assert 3 <= len(failed) < 20, "failed for about 0.3 s of 0.05-0.1 s waits"
    outage = {"status": 503, "fail_for_s": 60}
    down = ScriptedProvider(parse_scenario({"turns": [{"text": "x", "errors": [outage]}]}))
    tries: list[Attempt] = []
    with pytest.raises(ProviderError, match="scripted HTTP 503"):
        await down.complete(REQUEST, on_attempt=tries.append, max_retries=3)
    assert len(tries) == 4, "the call's max_retries, not the provider's own 2"

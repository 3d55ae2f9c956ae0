"""The retry policy: capped backoff with equal jitter, `Retry-After` capped, the deadline kept."""

from __future__ import annotations

import random
import time

import pytest

from ioh_tui.core.control import BudgetExhausted
from ioh_tui.core.errors import ProviderError
from ioh_tui.core.transcript import Attempt, Completion
from ioh_tui.engine import TaskContract
from ioh_tui.providers.retry import RETRY_AFTER_CAP_S, RetryPolicy, call_with_retries

OVERLOADED = ProviderError("overloaded", "busy", status=503)


def asked(seconds: float) -> ProviderError:
    return ProviderError("rate_limited", "slow down", status=429, retry_after=seconds)


def test_the_ceiling_doubles_from_the_base_up_to_the_cap() -> None:
    policy = RetryPolicy(base_s=1.0, max_s=30.0)
    assert [policy.ceiling_s(k) for k in range(1, 8)] == [1, 2, 4, 8, 16, 30, 30]


def test_a_huge_attempt_number_stays_at_the_cap() -> None:
    assert RetryPolicy().ceiling_s(100_000) == RetryPolicy().max_s


def test_equal_jitter_stays_within_half_the_ceiling_and_the_ceiling() -> None:
    policy = RetryPolicy(rng=random.Random(17).random)
    for attempt in range(1, 12):
        ceiling = policy.ceiling_s(attempt)
        waits = [policy.wait_s(attempt, OVERLOADED) for _ in range(300)]
        assert all(ceiling / 2 <= w <= ceiling for w in waits), attempt
        # Really random: the draws spread over the band rather than sitting on one edge.
        assert min(waits) < ceiling * 0.55 and max(waits) > ceiling * 0.95, attempt


def test_the_same_seed_gives_the_same_waits_and_another_seed_others() -> None:
    def waits(seed: int) -> list[float]:
        policy = RetryPolicy(rng=random.Random(seed).random)
        return [policy.wait_s(k, OVERLOADED) for k in range(1, 9)]

    assert waits(3) == waits(3)
    assert waits(3) != waits(4)


def test_no_jitter_waits_the_ceiling() -> None:
    policy = RetryPolicy(base_s=0.5, max_s=4.0, jitter=0.0)
    assert [policy.wait_s(k, OVERLOADED) for k in range(1, 6)] == [0.5, 1, 2, 4, 4]


def test_retry_after_is_taken_as_asked_below_the_cap_and_capped_above() -> None:
    policy = RetryPolicy(rng=lambda: 0.99)
    assert policy.wait_s(1, asked(7.0)) == 7.0, "no jitter on a server's own ask"
    assert policy.wait_s(1, asked(0.0)) == 0.0
    assert policy.wait_s(1, asked(3600.0)) == RETRY_AFTER_CAP_S == 60.0
    assert RetryPolicy(retry_after_cap_s=5).wait_s(1, asked(9.0)) == 5.0


@pytest.mark.parametrize("draw", [0.0, 0.5, 0.999999, None])
def test_by_default_a_20s_outage_is_outlasted_within_60s_whatever_the_draws(
    draw: float | None,
) -> None:
    # Attempts go at the sums of the waits; the outage ends 20 s after the first. The first
    # attempt at or after 20 s must come within the run's retries and before 60 s.
    rng = random.Random(11).random if draw is None else (lambda: draw)
    policy = RetryPolicy(rng=rng)
    retries = TaskContract.workspace("g", ".").max_retries
    at, attempt = 0.0, 1
    while at < 20:
        at += policy.wait_s(attempt, OVERLOADED)
        attempt += 1
    assert attempt - 1 <= retries
    assert at < 60


async def test_the_wait_reported_is_the_wait_slept() -> None:
    slept: list[float] = []
    attempts: list[Attempt] = []
    failures = iter([OVERLOADED, OVERLOADED, OVERLOADED])

    async def once() -> Completion:
        failure = next(failures, None)
        if failure is not None:
            raise failure
        return Completion(text="ok")

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    await call_with_retries(
        once,
        provider="p",
        model="m",
        max_retries=5,
        policy=RetryPolicy(rng=random.Random(5).random),
        on_attempt=attempts.append,
        sleep=sleep,
    )
    assert slept == [a.retry_in_s for a in attempts[:3]]
    assert len(set(slept)) == 3 and attempts[3].retry_in_s is None


async def test_a_capped_wait_that_would_pass_the_deadline_is_not_slept() -> None:
    slept: list[float] = []

    async def once() -> Completion:
        raise asked(3600.0)

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    attempts: list[Attempt] = []
    with pytest.raises(BudgetExhausted, match=r"a retry in 60\.0s would outlast"):
        await call_with_retries(
            once,
            provider="p",
            model="m",
            max_retries=3,
            on_attempt=attempts.append,
            deadline=time.monotonic() + 30,
            sleep=sleep,
        )
    assert slept == []
    assert [(a.failure, a.retry_in_s) for a in attempts] == [("rate_limited (HTTP 429)", None)]

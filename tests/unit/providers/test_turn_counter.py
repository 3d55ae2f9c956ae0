"""The scripted model's turn counter reads only what a request added, and agrees with
`Scenario.turn_index` on any sequence of requests (growing, folded, another agent's)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ioh_tui.core.transcript import Message, Request
from ioh_tui.providers.testing.scenario import Scenario, TurnCounter

_MESSAGES = st.sampled_from(
    [
        Message("assistant", "on it"),
        Message("tool", "output", (), "c1"),
        Message("user", "go on"),
        Message("user", "[earlier work, summarised: 3 turn(s)]\nthey read a file"),
        Message("user", "[2 earlier turn(s) left out to fit the window]"),
    ]
)
# Each request either extends the one before (a run's next turn) or starts again from any
# transcript (a fold, another agent sharing the model).
_STEPS = st.lists(st.tuples(st.booleans(), st.lists(_MESSAGES, max_size=4)), max_size=12)


@settings(max_examples=200, deadline=None)
@given(steps=_STEPS)
def test_the_counter_agrees_with_turn_index(steps: list[tuple[bool, list[Message]]]) -> None:
    scenario, counter = Scenario(), TurnCounter()
    messages: tuple[Message, ...] = (Message("system", "you are"), Message("user", "the goal"))
    for extend, added in steps:
        messages = (*messages, *added) if extend else (messages[0], *added)
        request = Request(messages)
        assert counter.index(request) == scenario.turn_index(request)

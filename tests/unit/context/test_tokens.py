"""Counting a request's tokens before it is sent, calibrated by the provider's reports."""

from __future__ import annotations

from ioh_tui.context import DEFAULT_WINDOW, Gauge, estimate, window_for
from ioh_tui.context.tokens import estimate_message
from ioh_tui.core.transcript import Message, Thought


def test_the_estimate_is_four_characters_a_token_plus_framing() -> None:
    assert estimate([Message("user", "x" * 400)]) == 104


def test_an_extended_request_counts_the_report_plus_what_was_added() -> None:
    gauge = Gauge()
    first = [Message("system", "s" * 400), Message("user", "u" * 400)]
    gauge.observe(first, (), input_tokens=300)  # the provider counts more than the estimate
    added = Message("assistant", "a" * 400)
    assert gauge.ratio == 300 / estimate(first)
    assert gauge.count([*first, added]) == 300 + -(-estimate([added]) * 300 // estimate(first))


def test_a_rewritten_request_is_the_estimate_scaled_by_the_last_ratio() -> None:
    gauge = Gauge()
    gauge.observe([Message("user", "x" * 800)], (), input_tokens=408)  # twice the estimate
    rewritten = [Message("user", "y" * 400)]
    assert gauge.count(rewritten) == 2 * estimate(rewritten)


def test_a_provider_that_reports_nothing_leaves_the_estimate_alone() -> None:
    gauge = Gauge()
    gauge.observe([Message("user", "x" * 800)], (), input_tokens=0)
    assert gauge.count([Message("user", "x" * 800)]) == estimate([Message("user", "x" * 800)])


def test_an_odd_report_cannot_blind_the_count() -> None:
    gauge = Gauge()
    gauge.observe([Message("user", "x" * 8000)], (), input_tokens=1)
    assert gauge.ratio == 0.25


def test_windows_come_from_the_override_then_the_table_then_the_default() -> None:
    assert window_for("claude-sonnet-4-5", 16_000) == 16_000
    assert window_for("anthropic/claude-sonnet-4-5") == 200_000
    assert window_for("gpt-4o-mini") == 128_000
    assert window_for("gpt-4.1-mini") == 1_047_576
    assert window_for("my-local-model") == DEFAULT_WINDOW
    assert window_for(None) == DEFAULT_WINDOW


def test_a_growing_transcript_is_calibrated_as_if_estimated_whole() -> None:
    gauge = Gauge()
    first = [Message("system", "s" * 400), Message("user", "u" * 400)]
    gauge.observe(first, (), input_tokens=300)
    grown = [*first, Message("assistant", "a" * 800)]
    gauge.observe(grown, (), input_tokens=600)
    assert gauge.ratio == 600 / estimate(grown)


def test_signed_reasoning_sent_back_is_counted() -> None:
    plain = Message("assistant", "Done.")
    thought = Message("assistant", "Done.", thoughts=(Thought("x" * 400, "sig"),))
    assert estimate_message(thought) - estimate_message(plain) == 100

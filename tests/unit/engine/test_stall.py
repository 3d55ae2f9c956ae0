"""Stall detection: repeats and steps that change nothing warn once, then stop the run."""

from __future__ import annotations

from ioh_tui.engine.stall import Progress, Verdict


def run(progress: Progress, steps: list[tuple[str, bool]]) -> list[Verdict]:
    return [progress.step(signature, changed=changed) for signature, changed in steps]


def test_identical_calls_warn_at_the_window_then_stall_at_the_next() -> None:
    verdicts = run(Progress(window=5), [("read_file:a", False)] * 10)
    assert verdicts[:4] == [Verdict.FINE] * 4
    assert verdicts[4] == Verdict.REPLAN
    assert verdicts[5:9] == [Verdict.FINE] * 4
    assert verdicts[9] == Verdict.STALLED


def test_identical_calls_stall_even_when_each_one_reports_a_change() -> None:
    # A spawn (or a write of the same content) sets `changed`; the same call is still a repeat.
    verdicts = run(Progress(window=3, max_replans=0), [("spawn:x", True)] * 3)
    assert verdicts == [Verdict.FINE, Verdict.FINE, Verdict.STALLED]


def test_steps_that_change_nothing_stall_only_once_they_repeat_themselves() -> None:
    progress = Progress(window=3, max_replans=0)
    assert (
        run(progress, [("a", False), ("b", False), ("c", False), ("d", False)])
        == [Verdict.FINE] * 4
    )
    assert progress.step("b", changed=False) == Verdict.STALLED


def test_a_change_clears_the_unproductive_count() -> None:
    steps = [("a", False), ("b", False), ("w", True), ("a", False), ("b", False)]
    assert run(Progress(window=3, max_replans=0), steps) == [Verdict.FINE] * 5
    without = [("a", False), ("b", False), ("a", False)]
    assert run(Progress(window=3, max_replans=0), without)[-1] == Verdict.STALLED


def test_steps_with_no_tool_call_count_as_repeats() -> None:
    verdicts = run(Progress(window=2, max_replans=0), [("", False), ("", False)])
    assert verdicts == [Verdict.FINE, Verdict.STALLED]


def test_a_window_of_zero_never_stalls() -> None:
    assert set(run(Progress(window=0), [("a", False)] * 50)) == {Verdict.FINE}

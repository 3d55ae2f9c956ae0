"""Fitting a transcript to the window: stale stubs, cut outputs, turns left out, never the last."""

from __future__ import annotations

from collections.abc import Sequence

from ioh_tui.context import Context, estimate, fit
from ioh_tui.context.fit import CUT_CHARS, KEEP_RECENT
from ioh_tui.core.transcript import Message, ToolCall

PINNED = (Message("system", "you are an agent"), Message("user", "Goal: fix it"))


def count(messages: Sequence[Message]) -> int:
    return estimate(messages)


def turn(i: int, name: str, output: str, **arguments: object) -> list[Message]:
    call = ToolCall(f"c{i}", name, arguments)
    return [Message("assistant", "", (call,)), Message("tool", output, tool_call_id=f"c{i}")]


def reads(n: int, size: int, path: str = "a.py") -> list[Message]:
    return [m for i in range(n) for m in turn(i, "read_file", f"{i}:" + "x" * size, path=path)]


def test_a_history_that_fits_is_sent_as_it_is() -> None:
    history = reads(3, 100)
    fitted = fit(PINNED, history, limit=10_000, count=count)
    assert fitted.fits and fitted.messages == tuple(history)
    assert (fitted.stubbed, fitted.cut, fitted.fold) == (0, 0, 0)


def test_a_file_read_again_later_leaves_a_stub_for_the_older_read() -> None:
    history = reads(3, 4_000)
    limit = count([*PINNED, *history]) - 1
    fitted = fit(PINNED, history, limit=limit, count=count)
    tools = [m.content for m in fitted.messages if m.role == "tool"]
    assert fitted.fits and fitted.stubbed == 2
    assert tools[0].startswith("[stale: read_file a.py: the file was read again")
    assert tools[2].startswith("2:")  # the newest read stays whole


def test_a_write_makes_the_earlier_read_of_that_file_stale_but_not_of_another() -> None:
    history = [
        *turn(1, "read_file", "A" * 3000, path="a.py"),
        *turn(2, "read_file", "B" * 3000, path="b.py"),
        *turn(3, "write_file", "wrote a.py", path="./a.py", content="new"),
    ]
    fitted = fit(PINNED, history, limit=count([*PINNED, *history]) - 1, count=count)
    tools = [m.content for m in fitted.messages if m.role == "tool"]
    assert tools[0].startswith("[stale: read_file a.py: the file was written")
    assert tools[1] == "B" * 3000


def test_a_command_run_again_with_other_arguments_is_not_stale() -> None:
    history = [
        *turn(1, "exec", "first " * 500, argv=["pytest", "-q"]),
        *turn(2, "exec", "other " * 500, argv=["pytest", "-x"]),
        *turn(3, "exec", "again " * 500, argv=["pytest", "-q"]),
    ]
    fitted = fit(PINNED, history, limit=count([*PINNED, *history]) - 1, count=count)
    tools = [m.content for m in fitted.messages if m.role == "tool"]
    assert tools[0] == "[stale: exec pytest -q: the same call was made again at a later step]"
    assert tools[1].startswith("other") and tools[2].startswith("again")


def test_old_large_outputs_are_cut_to_their_heads_and_recent_ones_are_not() -> None:
    history = [m for i in range(8) for m in turn(i, "read_file", f"{i}" * 10_000, path=f"f{i}.py")]
    limit = count([*PINNED, *history]) - 10
    fitted = fit(PINNED, history, limit=limit, count=count)
    tools = [m.content for m in fitted.messages if m.role == "tool"]
    assert fitted.fits and fitted.cut == 8 - KEEP_RECENT and fitted.fold == 0
    assert tools[0].startswith("0" * CUT_CHARS) and "more characters cut" in tools[0]
    assert all(t == f"{i}" * 10_000 for i, t in enumerate(tools) if i >= 8 - KEEP_RECENT)


def test_the_fewest_oldest_whole_turns_are_folded() -> None:
    history = [m for i in range(40) for m in turn(i, "read_file", "y" * 1500, path=f"f{i}.py")]
    fitted = fit(PINNED, history, limit=3_000, count=count, lead_reserve=100)
    assert not fitted.fits and fitted.fold > 0
    rest = history[2 * fitted.fold :]
    assert count([*PINNED, Message("user", "x" * 400), *rest]) <= 3_000
    # One turn fewer folded would not fit.
    assert count([*PINNED, Message("user", "x" * 400), *history[2 * fitted.fold - 2 :]]) > 3_000


def test_a_last_turn_larger_than_the_window_does_not_fit_and_is_kept() -> None:
    history = turn(1, "read_file", "z" * 40_000, path="big.py")
    fitted = fit(PINNED, history, limit=1_000, count=count)
    assert not fitted.fits and fitted.fold == 0
    assert fitted.messages[-1].content == "z" * 40_000


def test_the_same_history_always_gives_the_same_request() -> None:
    history = [m for i in range(30) for m in turn(i, "exec", "o" * 900, argv=["make", str(i % 3)])]
    one = fit(PINNED, history, limit=2_500, count=count)
    two = fit(PINNED, list(history), limit=2_500, count=count)
    assert one == two and one.stubbed > 0


def test_a_context_folds_turns_into_a_summary_then_sends_it_first() -> None:
    context = Context(window=8_000)
    history = [m for i in range(30) for m in turn(i, "grep", "g" * 3000, pattern=f"p{i}")]
    fitted = context.fit(PINNED, history, ())
    assert not fitted.fits and fitted.fold > 0
    folded = context.to_fold(fitted.fold)
    # Whole turns, oldest first: each call with its result (old outputs may have been cut).
    assert [m.tool_call_id or m.tool_calls[0].id for m in folded] == [
        m.tool_call_id or m.tool_calls[0].id for m in history[: 2 * fitted.fold]
    ]
    context.fold(fitted.fold, "read twelve files; nothing changed yet")
    again = context.fit(PINNED, history, ())
    assert again.fits and context.summarised == fitted.fold
    first = again.messages[0]
    assert first.content == (
        f"[earlier work, summarised: {fitted.fold} turn(s)]\nread twelve files; nothing changed yet"
    )
    assert again.messages[1:] == again.kept and again.kept[-1] == history[-1]


def test_turns_left_out_without_a_summary_are_said_in_one_line_and_summarised_later() -> None:
    context = Context(window=8_000)
    history = [m for i in range(30) for m in turn(i, "grep", "g" * 3000, pattern=f"p{i}")]
    first = context.fit(PINNED, history, ())
    context.fold(first.fold, None)
    sent = context.fit(PINNED, history, ()).messages
    assert sent[0].content.startswith(f"[{first.fold} earlier turn(s) left out")
    history += [m for i in range(30, 40) for m in turn(i, "grep", "h" * 3000, pattern=f"q{i}")]
    second = context.fit(PINNED, history, ())
    context.fold(second.fold, "all forty greps found nothing")
    assert (context.summarised, context.left_out) == (first.fold + second.fold, 0)


def test_a_restored_context_sends_what_the_drive_that_stored_the_summary_sent() -> None:
    history = [m for i in range(30) for m in turn(i, "grep", "g" * 3000, pattern=f"p{i}")]
    live = Context(window=8_000)
    fitted = live.fit(PINNED, history, ())
    live.fold(fitted.fold, "the summary")
    resumed = Context(window=8_000)
    resumed.restore(history, "the summary", live.summarised)
    assert resumed.fit(PINNED, history, ()).messages == live.fit(PINNED, history, ()).messages


def test_a_context_sends_a_bounded_request_however_long_the_run() -> None:
    context = Context(window=16_000)
    history: list[Message] = []
    sizes = []
    for i in range(600):
        history += turn(i, "read_file", f"{i:04d}:" + "r" * 2000, path=f"f{i % 50}.py")
        fitted = context.fit(PINNED, history, ())
        if fitted.fold:
            context.fold(fitted.fold, None)
            fitted = context.fit(PINNED, history, ())
        assert fitted.fits and fitted.tokens <= context.limit
        sizes.append(fitted.tokens)
    assert max(sizes[300:]) <= max(sizes[100:300]) + 2 and context.limit == 12_000

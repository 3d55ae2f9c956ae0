"""Images in the context: counted at a fixed estimate, folded with their call, named to the
summariser."""

from __future__ import annotations

from ioh_tui.context import estimate, fit
from ioh_tui.context.compaction import summary_request
from ioh_tui.context.tokens import IMAGE_TOKENS
from ioh_tui.core.transcript import Image, Message, ToolCall

PINNED = (Message("system", "you are an agent"), Message("user", "Goal: describe"))
PICTURE = Image("image/png", b"\x89PNG" + bytes(5_000), "shot.png", 800, 600)


def look(i: int) -> list[Message]:
    call = ToolCall(f"c{i}", "view_image", {"path": f"shot{i}.png"})
    return [
        Message("assistant", "", (call,)),
        Message("tool", f"[view_image shot{i}.png]", tool_call_id=f"c{i}", images=(PICTURE,)),
    ]


def test_an_image_counts_its_fixed_estimate_whatever_its_bytes() -> None:
    bare = Message("tool", "[view_image shot.png]", tool_call_id="c1")
    shown = Message("tool", "[view_image shot.png]", tool_call_id="c1", images=(PICTURE,) * 2)
    assert estimate([shown]) - estimate([bare]) == 2 * IMAGE_TOKENS


def test_folding_takes_whole_turns_so_an_image_never_leaves_its_call() -> None:
    history = [m for i in range(6) for m in look(i)]
    fitted = fit(PINNED, history, limit=3 * IMAGE_TOKENS, count=estimate, lead_reserve=50)
    assert not fitted.fits and fitted.fold > 0
    kept = history[2 * fitted.fold :]
    assert kept[0].role == "assistant"
    # Every image still sent follows the call that showed it.
    calls = {c.id for m in kept for c in m.tool_calls}
    assert all(m.tool_call_id in calls for m in kept if m.images)
    assert estimate([*PINNED, *kept]) + 50 <= 3 * IMAGE_TOKENS


def test_the_summariser_is_told_what_was_shown_and_sent_no_image() -> None:
    request = summary_request("describe", None, look(1), limit=10_000)
    assert (
        "[image shown: shot.png (image/png, 5,004 bytes, 800x600)]" in request.messages[1].content
    )
    assert not any(m.images for m in request.messages)

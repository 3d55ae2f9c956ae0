"""The rule for what a person is shown: control characters visible, keys masked, split or cut."""

from __future__ import annotations

import pytest

from ioh_tui.core.redact import MASK, Redactor
from ioh_tui.core.visible import visible

KEY = "sk-test-UNITCANARY-0123456789abcdef"


def test_every_control_character_but_newline_and_tab_is_shown_as_its_escape() -> None:
    controls = [chr(c) for c in (*range(0x20), 0x7F, *range(0x80, 0xA0))]
    shown = visible("".join(controls))
    assert "\n" in shown and "\t" in shown
    assert not [c for c in controls if c in shown and c not in "\n\t"]
    assert visible("\x1b]52;c;QQ==\x07\x9b2J\r") == "\\x1b]52;c;QQ==\\x07\\x9b2J\\x0d"
    assert visible("naïve ✓ 漢字 \u00a0") == "naïve ✓ 漢字 \u00a0"  # printable text is kept


def test_a_key_is_masked_whole_and_cut_to_half_or_more() -> None:
    redact = Redactor([KEY, "short"])  # under eight characters is no key
    assert redact.text(f"a {KEY} b short") == f"a {MASK} b short"
    half = KEY[: len(KEY) // 2]
    assert redact.text(f"capped: '{half}'") == f"capped: '{MASK}'"
    assert redact.text(f"x {KEY[:10]} y") == f"x {KEY[:10]} y"  # a short prefix is kept


@pytest.mark.parametrize("cut", range(1, len(KEY) + 8))
def test_a_key_split_anywhere_across_streamed_pieces_never_comes_out(cut: int) -> None:
    text = f"say {KEY} and {KEY}!"
    out: list[str] = []
    stream = Redactor([KEY]).stream(out.append)
    for i in range(0, len(text), cut):
        stream.feed(text[i : i + cut])
    stream.flush()
    assert "".join(out) == f"say {MASK} and {MASK}!"
    assert not any(KEY[: len(KEY) // 2] in piece for piece in out)


def test_a_stream_ending_in_the_start_of_a_key_hands_it_over_at_the_end() -> None:
    out: list[str] = []
    stream = Redactor([KEY]).stream(out.append)
    stream.feed("ends with sk-")
    assert out == ["ends with "]
    stream.flush()
    assert out == ["ends with ", "sk-"]

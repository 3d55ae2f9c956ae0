"""The SSE decoder against the WHATWG examples and the edge cases real streams produce."""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Iterable

from hypothesis import given, settings
from hypothesis import strategies as st

from ioh_tui.providers.sse import EventDecoder, LineDecoder, ServerSentEvent, aiter_sse, iter_sse


def events(*chunks: bytes) -> list[ServerSentEvent]:
    return list(iter_sse(chunks))


def data_of(*chunks: bytes) -> list[str]:
    return [e.data for e in events(*chunks)]


def every_split(stream: bytes) -> Iterable[list[bytes]]:
    """The stream cut at every single position and at every pair of positions."""
    yield [stream]
    for i in range(1, len(stream)):
        yield [stream[:i], stream[i:]]
    for i, j in itertools.combinations(range(1, len(stream)), 2):
        yield [stream[:i], stream[i:j], stream[j:]]


def test_whatwg_stock_ticker_joins_data_lines_with_newlines() -> None:
    stream = b"data: YHOO\ndata: +2\ndata: 10\n\n"
    assert data_of(stream) == ["YHOO\n+2\n10"]


def test_whatwg_comments_ids_and_one_stripped_space() -> None:
    stream = (
        b": test stream\n\n"
        b"data: first event\nid: 1\n\n"
        b"data:second event\nid\n\n"
        b"data:  third event\n\n"
    )
    got = events(stream)
    assert [(e.data, e.id) for e in got] == [
        ("first event", "1"),
        ("second event", ""),
        (" third event", ""),
    ]


def test_whatwg_empty_data_blocks_and_unterminated_last_block() -> None:
    # The first block fires "", the second "\n"; the last has no blank line after it.
    stream = b"data\n\ndata\ndata\n\ndata:"
    assert data_of(stream) == ["", "\n"]


def test_whatwg_space_after_colon_is_optional() -> None:
    assert data_of(b"data:test\n\ndata: test\n\n") == ["test", "test"]


def test_block_without_data_is_not_dispatched() -> None:
    assert events(b"event: ping\n\nid: 7\n\nretry: 10\n\n") == []


def test_id_persists_and_retry_belongs_to_its_block() -> None:
    got = events(b"id: 5\nretry: 1500\ndata: a\n\ndata: b\n\n")
    assert [(e.data, e.id, e.retry) for e in got] == [("a", "5", 1500), ("b", "5", None)]


def test_id_with_nul_and_non_digit_retry_are_ignored() -> None:
    got = events(b"id: 1\n\ndata: a\nid: x\x00y\nretry: 1e3\n\n")
    assert (got[0].id, got[0].retry) == ("1", None)


def test_event_name_unknown_fields_and_field_without_colon() -> None:
    got = events(b"event: message_start\nfoo: bar\nbaz\ndata: {}\n\ndata: x\n\n")
    assert [(e.event, e.data) for e in got] == [("message_start", "{}"), ("message", "x")]


def test_comment_lines_are_ignored_between_events() -> None:
    stream = b": OPENROUTER PROCESSING\n\ndata: 1\n: OPENROUTER PROCESSING\ndata: 2\n\n"
    assert data_of(stream) == ["1\n2"]


def test_cr_lf_and_crlf_line_ends_are_equivalent() -> None:
    expected = ["a\nb", "c"]
    assert data_of(b"data: a\ndata: b\n\ndata: c\n\n") == expected
    assert data_of(b"data: a\rdata: b\r\rdata: c\r\r") == expected
    assert data_of(b"data: a\r\ndata: b\r\n\r\ndata: c\r\n\r\n") == expected
    assert data_of(b"data: a\rdata: b\r\n\ndata: c\n\r") == expected


def test_cr_ending_one_chunk_and_lf_starting_the_next_is_one_line_end() -> None:
    # Read as two line ends, the LF would be a blank line and dispatch "a" on its own.
    assert data_of(b"data: a\r", b"\ndata: b\r\n\r\n") == ["a\nb"]


def test_cr_line_is_complete_without_waiting_for_the_next_chunk() -> None:
    lines = LineDecoder()
    assert lines.decode(b"data: a\r") == ["data: a"]
    assert lines.decode(b"\n\r\n") == [""]


def test_every_split_of_a_mixed_stream_decodes_the_same() -> None:
    stream = ": c\r\ndata: é1\r\n\r\nevent: e\rdata: 😀\r\rdata:\n\n".encode()
    expected = [("message", "é1"), ("e", "😀"), ("message", "")]
    for chunks in every_split(stream):
        got = [(e.event, e.data) for e in events(*chunks)]
        assert got == expected, chunks


def test_multibyte_characters_split_across_chunks_byte_by_byte() -> None:
    text = "naïve 日本 😀"
    stream = f"data: {text}\n\n".encode()
    assert data_of(*(stream[i : i + 1] for i in range(len(stream)))) == [text]


def test_invalid_utf8_becomes_replacement_character() -> None:
    assert data_of(b"data: a\xffb\n\n") == ["a\ufffdb"]


def test_leading_bom_is_dropped_once() -> None:
    bom = "\ufeff".encode()
    assert data_of(bom[:2], bom[2:] + b"data: x\n\n") == ["x"]
    # A BOM later in the stream is content, and at the start of a line it makes a field name.
    assert events(b"data: x\n\n" + bom + b"data: y\n\n") == [ServerSentEvent(data="x")]


def test_final_event_without_blank_line_is_dropped() -> None:
    assert data_of(b"data: a\n\ndata: [DONE]\n") == ["a"]
    assert data_of(b"data: a\n\ndata: [DONE]") == ["a"]


def test_flush_returns_the_unterminated_line() -> None:
    lines = LineDecoder()
    assert lines.decode(b"data: a\ndata: \xe2\x82") == ["data: a"]
    assert lines.flush() == ["data: \ufffd"]


def test_event_decoder_is_line_at_a_time() -> None:
    decoder = EventDecoder()
    assert decoder.decode("data: x") is None
    assert decoder.decode("") == ServerSentEvent(data="x")
    assert decoder.decode("") is None


async def test_async_iterator_over_network_chunks() -> None:
    async def chunks() -> AsyncIterator[bytes]:
        for piece in (b'data: {"a"', b": 1}\r", b"\n\r\n", b"data: tail"):
            yield piece

    got = [e async for e in aiter_sse(chunks())]
    assert got == [ServerSentEvent(data='{"a": 1}')]


_field_text = st.text(
    alphabet=st.characters(blacklist_categories=["Cs"], blacklist_characters="\r\n"), max_size=8
)


@settings(max_examples=150, deadline=None)
@given(
    blocks=st.lists(st.lists(_field_text, min_size=1, max_size=3), min_size=1, max_size=4),
    line_end=st.sampled_from(["\n", "\r", "\r\n"]),
    cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=6),
)
def test_any_events_any_line_ends_any_cuts(
    blocks: list[list[str]], line_end: str, cuts: list[int]
) -> None:
    text = "".join(
        "".join(f"data: {line}{line_end}" for line in block) + line_end for block in blocks
    )
    stream = text.encode()
    points = sorted({min(c, len(stream)) for c in cuts})
    chunks = [stream[a:b] for a, b in itertools.pairwise([0, *points, len(stream)])]
    assert data_of(*chunks) == ["\n".join(block) for block in blocks]


def _line_at_a_time(chunks: list[bytes]) -> list[ServerSentEvent]:
    """The events as `LineDecoder` and `EventDecoder` make them, one line at a time."""
    lines, decoder = LineDecoder(), EventDecoder()
    out = []
    for chunk in chunks:
        for line in lines.decode(chunk):
            event = decoder.decode(line)
            if event is not None:
                out.append(event)
    return out


_PIECES = ["data: ", "data:", "data: x", "event: e", "id: 7", "retry: 30", ": c", "é", "😀"]


@settings(max_examples=300, deadline=None)
@given(
    parts=st.lists(
        st.tuples(st.sampled_from(_PIECES), st.sampled_from(["\n", "\r", "\r\n", "\n\n", ""])),
        max_size=16,
    ),
    cuts=st.lists(st.floats(min_value=0, max_value=1), max_size=12),
    bom=st.booleans(),
)
def test_a_chunk_at_a_time_is_exactly_a_line_at_a_time(
    parts: list[tuple[str, str]], cuts: list[float], bom: bool
) -> None:
    text = "".join(piece + end for piece, end in parts)
    stream = (("\ufeff" if bom else "") + text).encode()
    points = sorted({round(c * len(stream)) for c in cuts})
    chunks = [stream[a:b] for a, b in itertools.pairwise([0, *points, len(stream)])]
    assert list(iter_sse(chunks)) == _line_at_a_time(chunks)

"""Tests for the incremental SSE decoder, against a whole-input reference parser."""

from __future__ import annotations

import re
import tracemalloc
from collections.abc import Iterable, Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chunks import byte_by_byte, split
from strategies import per_pass
from toolstitch.decode.sse import SSEDecoder, SSEMessage
from toolstitch.vocab.errors import StreamDecodeError

KB = 1024
MB = 1024 * 1024


# -- reference ----------------------------------------------------------------------------


def reference(body: bytes) -> tuple[list[SSEMessage], int]:
    """The WHATWG event stream interpretation, on the whole input at once, written literally.

    Differs from the spec only where SSEDecoder.close() documents it: a final event without
    its blank line is dispatched. Returns the messages and the number of comment lines.
    """
    text = body.decode("utf-8", "replace")
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = re.split(r"\r\n|\r|\n", text)
    if lines[-1] == "":  # the body ended with a line terminator
        lines.pop()
    lines.append("")  # close(): flush the pending event
    messages: list[SSEMessage] = []
    comments = 0
    data_buffer = ""
    event_type = ""
    last_event_id: str | None = None
    retry: int | None = None
    for line in lines:
        if line == "":
            if data_buffer != "":
                if data_buffer.endswith("\n"):
                    data_buffer = data_buffer[:-1]
                messages.append(
                    SSEMessage(event_type or "message", data_buffer, last_event_id, retry)
                )
            data_buffer = ""
            event_type = ""
            retry = None
            continue
        if line.startswith(":"):
            comments += 1
            continue
        if ":" in line:
            name, _, value = line.partition(":")
            if value.startswith(" "):
                value = value[1:]
        else:
            name, value = line, ""
        if name == "event":
            event_type = value
        elif name == "data":
            data_buffer += value + "\n"
        elif name == "id":
            if "\x00" not in value:
                last_event_id = value
        elif name == "retry" and value != "" and all(c in "0123456789" for c in value):
            retry = int(value)
    return messages, comments


def decode(chunks: Iterable[bytes], decoder: SSEDecoder | None = None) -> list[SSEMessage]:
    decoder = decoder or SSEDecoder()
    out: list[SSEMessage] = []
    for chunk in chunks:
        out += decoder.feed(chunk)
    out += decoder.close()
    return out


# -- stream generation --------------------------------------------------------------------

_text = st.text(
    alphabet=st.characters(blacklist_categories=["Cs"], blacklist_characters="\r\n"),
    max_size=12,
)
_values = _text | st.sampled_from(
    ["[DONE]", "", " ", "12", "007", "1a", "-1", "３", "a\x00b", "\x0b\x0c\x1c\x85\u2028", "é€😀"]
)
_names = st.sampled_from(["data", "data", "data", "event", "id", "retry", "", "x", "Data", "data "])
_separators = st.sampled_from([":", ": ", ":  ", ""])


@st.composite
def _field_line(draw: st.DrawFn) -> bytes:
    name, separator, value = draw(_names), draw(_separators), draw(_values)
    return (name + separator + value if separator else name).encode()


# Bytes that are not valid UTF-8 (lone continuation bytes, truncated sequences).
_raw_line = st.tuples(
    st.sampled_from([b"data:", b"data: ", b"event:", b"id:", b""]),
    st.binary(max_size=8).map(lambda b: b.replace(b"\r", b"").replace(b"\n", b"")),
).map(lambda t: t[0] + t[1])

_line = st.one_of(
    _field_line(),
    _field_line(),
    _values.map(lambda v: (":" + v).encode()),  # comment
    st.just(b""),  # blank line: dispatch
    st.just(b""),
    _raw_line,
)
_eol = st.sampled_from([b"\n", b"\r", b"\r\n"])


@st.composite
def streams(draw: st.DrawFn) -> bytes:
    parts = [b"\xef\xbb\xbf"] if draw(st.booleans()) else []
    for line in draw(st.lists(_line, max_size=14)):
        parts += [line, draw(_eol)]
    if draw(st.booleans()):
        parts.append(draw(_field_line()))  # a last line without terminator
    return b"".join(parts)


# -- properties ---------------------------------------------------------------------------


@per_pass(100)
@given(streams(), st.data())
def test_any_chunking_matches_the_reference(body: bytes, data: st.DataObject) -> None:
    expected, comments = reference(body)
    cuts = data.draw(st.lists(st.integers(0, len(body)), max_size=8))
    decoder = SSEDecoder()
    assert decode(split(body, cuts), decoder) == expected
    assert decoder.comments == comments


@per_pass(100)
@given(streams())
def test_byte_by_byte_matches_the_reference(body: bytes) -> None:
    assert decode(byte_by_byte(body)) == reference(body)[0]


@given(streams())
@per_pass(50)
def test_every_two_chunk_split_matches_the_reference(body: bytes) -> None:
    # Every split point: inside each CRLF, each UTF-8 sequence, each BOM.
    expected = reference(body)[0]
    for i in range(len(body) + 1):
        assert decode([body[:i], body[i:]]) == expected, i


@per_pass(100)
@given(streams())
def test_messages_come_out_as_soon_as_their_blank_line_arrives(body: bytes) -> None:
    # Feeding the whole body at once leaves only the final, unterminated event for close().
    decoder = SSEDecoder()
    fed = decoder.feed(body)
    closed = decoder.close()
    assert fed + closed == reference(body)[0]
    assert len(closed) <= 1


def _line_spans(body: bytes) -> list[tuple[int, int]]:
    """(start, end) byte offsets of every line, terminators and the BOM excluded."""
    start = 3 if body.startswith(b"\xef\xbb\xbf") else 0
    spans = []
    for match in re.compile(rb"\r\n|\r|\n").finditer(body, start):
        spans.append((start, match.start()))
        start = match.end()
    if start < len(body):
        spans.append((start, len(body)))
    return spans


@per_pass(100)
@given(streams(), st.integers(1, 12), st.data())
def test_line_limit_raises_at_the_first_long_line(
    body: bytes, limit: int, data: st.DataObject
) -> None:
    long_lines = [(s, e) for s, e in _line_spans(body) if e - s > limit]
    cuts = data.draw(st.lists(st.integers(0, len(body)), max_size=6))
    decoder = SSEDecoder(max_line_bytes=limit)
    if not long_lines:
        assert decode(split(body, cuts), decoder) == reference(body)[0]
        return
    with pytest.raises(StreamDecodeError, match="max_line_bytes") as info:
        decode(split(body, cuts), decoder)
    assert info.value.offset == long_lines[0][0] + limit


def _event_limit_offset(body: bytes, limit: int) -> int | None:
    """Where the data of some event first passes ``limit`` bytes (joining "\\n" included).

    Every data byte is mapped to its stream offset; a joining newline, which is not in the
    stream, to the start of the value it joins.
    """
    data_offsets: list[int] = []
    data_lines = 0
    for start, end in _line_spans(body):
        line = body[start:end]
        if line == b"":
            data_offsets = []
            data_lines = 0
            continue
        if line == b"data":
            value_start = end
        elif line.startswith(b"data:"):
            value_start = start + 5 + (line[5:6] == b" ")
        else:
            continue
        joined = [value_start] if data_lines else []
        data_offsets += joined + list(range(value_start, end))
        data_lines += 1
        if len(data_offsets) > limit:
            return data_offsets[limit]
    return None


@per_pass(100)
@given(streams(), st.integers(1, 12), st.data())
def test_event_limit_raises_where_the_data_passes_it(
    body: bytes, limit: int, data: st.DataObject
) -> None:
    expected_offset = _event_limit_offset(body, limit)
    cuts = data.draw(st.lists(st.integers(0, len(body)), max_size=6))
    decoder = SSEDecoder(max_event_bytes=limit)
    if expected_offset is None:
        assert decode(split(body, cuts), decoder) == reference(body)[0]
        return
    with pytest.raises(StreamDecodeError, match="max_event_bytes") as info:
        decode(split(body, cuts), decoder)
    assert info.value.offset == expected_offset


# -- examples from the spec and from providers --------------------------------------------


def msgs(body: bytes) -> list[SSEMessage]:
    return decode([body])


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_spec_multi_line_data() -> None:
    assert msgs(b"data: YHOO\ndata: +2\ndata: 10\n\n") == [SSEMessage(data="YHOO\n+2\n10")]


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_spec_comment_id_and_space_handling() -> None:
    body = (
        b": test stream\n\ndata: first event\nid: 1\n\n"
        b"data:second event\nid\n\ndata:  third event\n\n"
    )
    decoder = SSEDecoder()
    assert decode([body], decoder) == [
        SSEMessage(data="first event", id="1"),
        SSEMessage(data="second event", id=""),
        SSEMessage(data=" third event", id=""),
    ]
    assert decoder.comments == 1
    assert decoder.last_event_id == ""


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_spec_data_without_colon_and_empty_data() -> None:
    decoder = SSEDecoder()
    fed = decoder.feed(b"data\n\ndata\ndata\n\ndata:")
    assert fed == [SSEMessage(data=""), SSEMessage(data="\n")]
    # The spec discards the last block (no blank line); close() dispatches it on purpose.
    assert decoder.close() == [SSEMessage(data="")]


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_spec_one_leading_space_is_removed() -> None:
    assert msgs(b"data:test\n\ndata: test\n\n") == [SSEMessage(data="test")] * 2


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_event_type_and_empty_event() -> None:
    assert msgs(b"event: add\ndata: 73857293\n\nevent: remove\ndata: 2153\n\n") == [
        SSEMessage(event="add", data="73857293"),
        SSEMessage(event="remove", data="2153"),
    ]
    # No data: nothing is dispatched, but the event type still resets.
    assert msgs(b"event: ping\n\ndata: x\n\n") == [SSEMessage(data="x")]
    assert msgs(b"event:\ndata: x\n\n") == [SSEMessage(event="message", data="x")]


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_retry() -> None:
    decoder = SSEDecoder()
    assert decode([b"retry: 3000\ndata: a\n\ndata: b\n\n"], decoder) == [
        SSEMessage(data="a", retry=3000),
        SSEMessage(data="b"),
    ]
    assert decoder.retry == 3000
    for bad in [b"retry: 3a", b"retry: -1", b"retry:", b"retry: 1.5", "retry: ３".encode()]:
        assert msgs(bad + b"\ndata: x\n\n") == [SSEMessage(data="x")], bad


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_id_persists_and_nul_is_ignored() -> None:
    assert msgs(b"id: 7\ndata: a\n\ndata: b\n\nid: x\x00y\ndata: c\n\n") == [
        SSEMessage(data="a", id="7"),
        SSEMessage(data="b", id="7"),
        SSEMessage(data="c", id="7"),
    ]


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_unknown_fields_and_field_names_are_exact() -> None:
    assert msgs(b"Data: a\ndata : b\nfoo: c\ndata: d\n\n") == [SSEMessage(data="d")]


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_only_cr_and_lf_end_lines() -> None:
    value = "a\x0bb\x0cc\x1cd\x1de\x1ef\x85g\u2028h\u2029i"
    assert msgs(f"data: {value}\r\rdata: z\r\n\r\n".encode()) == [
        SSEMessage(data=value),
        SSEMessage(data="z"),
    ]


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_bom_is_stripped_once() -> None:
    assert msgs(b"\xef\xbb\xbfdata: x\n\n") == [SSEMessage(data="x")]
    # A second BOM belongs to the field name, which then is not "data".
    assert msgs(b"\xef\xbb\xbf\xef\xbb\xbfdata: x\n\n") == []
    assert decode(byte_by_byte(b"\xef\xbb\xbfdata: x\n\n")) == [SSEMessage(data="x")]
    assert msgs(b"\xef\xbbdata: x\n\n") == []  # half a BOM is not a BOM
    assert msgs(b"\xef") == []


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_invalid_utf8_is_replaced() -> None:
    assert msgs(b"data: a\xffb\xe2\x82\n\n") == [SSEMessage(data="a\ufffdb\ufffd")]


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_split_inside_utf8_and_crlf() -> None:
    body = "data: é€😀\r\n\r\n".encode()
    for i in range(len(body) + 1):
        assert decode([body[:i], body[i:]]) == [SSEMessage(data="é€😀")], i


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_done_sentinel() -> None:
    out = msgs(b'data: {"a": 1}\n\ndata: [DONE]\n\n')
    assert [m.is_done for m in out] == [False, True]
    assert out[1] == SSEMessage(data="[DONE]")


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_gemini_crlf_style() -> None:
    body = b'data: {"candidates": [1]}\r\n\r\ndata: {"candidates": [2]}\r\n\r\n'
    expected = [SSEMessage(data='{"candidates": [1]}'), SSEMessage(data='{"candidates": [2]}')]
    assert decode(byte_by_byte(body)) == expected
    decoder = SSEDecoder()
    # Each event is out as soon as its blank line is complete, even split inside CRLF.
    assert decoder.feed(body[:27]) == []
    assert decoder.feed(body[27:29]) == expected[:1]


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_final_event_without_blank_line() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"data: a\n\ndata: b\n") == [SSEMessage(data="a")]
    assert decoder.close() == [SSEMessage(data="b")]
    decoder = SSEDecoder()
    assert decoder.feed(b"event: e\ndata: b") == []
    assert decoder.close() == [SSEMessage(event="e", data="b")]


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_close_is_idempotent_and_feed_after_close_raises() -> None:
    decoder = SSEDecoder()
    decoder.feed(b"data: a")
    assert decoder.close() == [SSEMessage(data="a")]
    assert decoder.close() == []
    with pytest.raises(RuntimeError):
        decoder.feed(b"data: b\n\n")


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_empty_chunks_are_ignored() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"") == []
    assert decoder.feed(b"data: a\r") == []
    assert decoder.feed(b"") == []
    assert decoder.feed(b"\n\r\n") == [SSEMessage(data="a")]


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_invalid_limits_are_refused() -> None:
    with pytest.raises(ValueError, match="positive"):
        SSEDecoder(max_line_bytes=0)


# -- limits and cost ----------------------------------------------------------------------


def _fresh_chunks(size: int, count: int, fill: int = 0x78) -> Iterator[bytes]:
    # A new object each time, so that a decoder that kept them would show in tracemalloc.
    for _ in range(count):
        yield bytes([fill]) * size


def _feed_until_error(decoder: SSEDecoder, chunks: Iterable[bytes]) -> tuple[int, int, Exception]:
    fed = 0
    tracemalloc.start()
    try:
        for chunk in chunks:
            fed += len(chunk)
            decoder.feed(chunk)
    except StreamDecodeError as exc:
        peak = tracemalloc.get_traced_memory()[1]
        return fed, peak, exc
    finally:
        tracemalloc.stop()
    raise AssertionError("no StreamDecodeError")


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_a_huge_line_raises_after_about_the_limit_with_bounded_memory() -> None:
    decoder = SSEDecoder(max_line_bytes=1 * MB)
    # 2 GB if it were all read: the decoder must stop after about 1 MB.
    chunks = _fresh_chunks(64 * KB, 32 * KB)
    fed, peak, error = _feed_until_error(decoder, chunks)
    assert isinstance(error, StreamDecodeError)
    assert error.offset == 1 * MB
    assert "max_line_bytes=1048576" in str(error)
    assert error.code == "stream-decode-error"
    assert fed <= 1 * MB + 64 * KB
    assert peak < 3 * MB
    # The decoder is dead: later calls raise the same error again.
    with pytest.raises(StreamDecodeError, match="max_line_bytes") as again:
        decoder.feed(b"\n\ndata: x\n\n")
    assert again.value.offset == 1 * MB
    with pytest.raises(StreamDecodeError, match="max_line_bytes") as again:
        decoder.close()
    assert again.value.offset == 1 * MB


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_a_huge_data_line_hits_the_event_limit_before_it_ends() -> None:
    decoder = SSEDecoder(max_line_bytes=1024 * MB, max_event_bytes=1 * MB)
    decoder.feed(b"event: x\ndata: ")  # the value starts at byte 15
    fed, peak, error = _feed_until_error(decoder, _fresh_chunks(64 * KB, 32 * KB))
    assert isinstance(error, StreamDecodeError)
    assert "max_event_bytes=1048576" in str(error)
    assert error.offset == 15 + 1 * MB
    assert fed <= 1 * MB + 64 * KB
    assert peak < 3 * MB


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_many_data_lines_hit_the_event_limit() -> None:
    decoder = SSEDecoder(max_event_bytes=1_000_000)
    line = b"data: " + b"y" * 1000 + b"\n"  # 1007 bytes; 1000 data bytes + 1 joining "\n"
    with pytest.raises(StreamDecodeError, match="max_event_bytes") as info:
        decode([line] * 2000, decoder)
    # Line 999 brings the data to 999,999 bytes before its value; its 2nd byte passes.
    assert info.value.offset == 999 * 1007 + 6 + 1


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_events_under_the_limit_pass() -> None:
    decoder = SSEDecoder(max_line_bytes=1006, max_event_bytes=2001)
    body = (b"data: " + b"a" * 1000 + b"\n") * 2 + b"\n"
    assert decode(byte_by_byte(body), decoder) == [SSEMessage(data="a" * 1000 + "\n" + "a" * 1000)]


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_a_large_event_is_held_once_not_copied_per_chunk() -> None:
    # A decoder that re-joined or re-scanned its buffer per chunk would also hold copies of it;
    # memory, unlike time, can be asserted: the peak stays near the event's own size.
    size = 16 * MB
    chunks = list(_fresh_chunks(64 * KB, size // (64 * KB)))
    decoder = SSEDecoder(max_line_bytes=1024 * MB, max_event_bytes=1024 * MB)
    tracemalloc.start()
    try:
        decoder.feed(b"data: ")
        for chunk in chunks:
            decoder.feed(chunk)
        (message,) = decoder.feed(b"\n\n")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(message.data) == size
    assert peak < 4 * size, peak

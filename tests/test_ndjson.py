"""The NDJSON decoder (Ollama ``/api/chat``): any chunking, bounded lines, bad lines in place."""

from __future__ import annotations

import json
import tracemalloc
from collections.abc import Iterable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunks import byte_by_byte, split
from strategies import per_pass
from toolstitch.decode.ndjson import NDJSONDecoder, NDJSONItem
from toolstitch.vocab.errors import StreamDecodeError


def decode(chunks: Iterable[bytes], decoder: NDJSONDecoder | None = None) -> list[NDJSONItem]:
    decoder = decoder or NDJSONDecoder()
    out: list[NDJSONItem] = []
    for chunk in chunks:
        out += decoder.feed(chunk)
    out += decoder.close()
    return out


def shown(items: list[NDJSONItem]) -> list[object]:
    """Items with errors as ``(offset, message)``: errors compare by identity."""
    return [(i.offset, i.message) if isinstance(i, StreamDecodeError) else i for i in items]


BODY = b'{"a": 1}\n{"b": [true, null]}\r\n\n  \n{"c": "\xc3\xa9"}'
OBJECTS = [{"a": 1}, {"b": [True, None]}, {"c": "é"}]


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_lines_crlf_blank_lines_and_a_last_line_without_newline() -> None:
    assert decode([BODY]) == OBJECTS


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_every_chunking_gives_the_same_items() -> None:
    assert decode(byte_by_byte(BODY)) == OBJECTS
    assert decode(BODY.splitlines(keepends=True)) == OBJECTS


# Same code on either path (no assembler, no C): half the examples on each pass.
@per_pass(60, settings(deadline=None))
@given(
    values=st.lists(
        st.dictionaries(st.text(max_size=4), st.integers() | st.text(max_size=6), max_size=3),
        max_size=5,
    ),
    crlf=st.booleans(),
    data=st.data(),
)
def test_any_split_gives_the_objects_json_loads_gives(
    values: list[dict[str, object]], crlf: bool, data: st.DataObject
) -> None:
    end = b"\r\n" if crlf else b"\n"
    body = b"".join(json.dumps(v).encode() + end for v in values)
    cuts = data.draw(st.lists(st.integers(0, len(body)), max_size=12))
    assert decode(split(body, cuts)) == values


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_an_object_is_returned_by_the_feed_that_ends_its_line() -> None:
    decoder = NDJSONDecoder()
    assert decoder.feed(b'{"a": 1}') == []
    assert decoder.feed(b"\n") == [{"a": 1}]
    assert decoder.close() == []


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_a_line_that_is_not_an_object_comes_back_in_place_with_its_offset() -> None:
    body = b'{"a": 1}\n[1]\n{"b": \n"x"\nNaN\n{"d": 4}\n'
    items = decode([body])
    assert items[0] == {"a": 1}
    assert items[-1] == {"d": 4}
    errors = items[1:-1]
    assert all(isinstance(e, StreamDecodeError) for e in errors)
    offsets = [e.offset for e in errors if isinstance(e, StreamDecodeError)]
    assert offsets == [9, 13, 20, 24]
    assert "a JSON array, not an object" in shown(items)[1][1]  # type: ignore[index]
    # the same in any chunking
    assert shown(decode(byte_by_byte(body))) == shown(items)


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_unpaired_surrogate_escapes_are_refused_and_pairs_kept() -> None:
    items = decode([b'{"a": "\\ud800"}\n{"a": "\\ud83d\\ude00"}\n'])
    assert isinstance(items[0], StreamDecodeError)
    assert items[0].offset == 0
    assert items[1] == {"a": "\U0001f600"}


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_invalid_utf8_is_replaced_as_the_sse_decoder_does() -> None:
    assert decode([b'{"a": "\xff"}\n']) == [{"a": "\ufffd"}]


def feed_all(decoder: NDJSONDecoder, chunks: list[bytes], out: list[NDJSONItem]) -> None:
    for chunk in chunks:
        out += decoder.feed(chunk)
    out += decoder.close()


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_a_line_past_the_limit_raises_at_the_byte_that_passes_it() -> None:
    body = b'{"a": 1}\n{"b": "' + b"x" * 20 + b'"}\n'
    for chunks in ([body], byte_by_byte(body)):
        decoder = NDJSONDecoder(max_line_bytes=16)
        got: list[NDJSONItem] = []
        with pytest.raises(StreamDecodeError, match="max_line_bytes=16") as info:
            feed_all(decoder, chunks, got)
        assert info.value.offset == 9 + 16
        # The line before the fault is never lost with it, whatever the chunking.
        assert got == [{"a": 1}]
        # dead: every later call raises again
        with pytest.raises(StreamDecodeError):
            decoder.feed(b"{}\n")
        with pytest.raises(StreamDecodeError):
            decoder.close()


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_a_line_of_exactly_the_limit_is_read() -> None:
    line = b'{"b": "' + b"x" * 7 + b'"}'
    assert len(line) == 16
    assert decode([line + b"\n"], NDJSONDecoder(max_line_bytes=16)) == [{"b": "x" * 7}]
    assert decode(byte_by_byte(line), NDJSONDecoder(max_line_bytes=16)) == [{"b": "x" * 7}]


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_an_unterminated_last_line_past_the_limit_raises_while_buffering() -> None:
    decoder = NDJSONDecoder(max_line_bytes=8)
    decoder.feed(b'{"a": "')
    with pytest.raises(StreamDecodeError) as info:
        decoder.feed(b"xxxx")
    assert info.value.offset == 8


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_close_is_idempotent_and_feed_after_close_is_an_error() -> None:
    decoder = NDJSONDecoder()
    assert decoder.close() == []
    assert decoder.close() == []
    with pytest.raises(RuntimeError):
        decoder.feed(b"{}")


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_the_limit_must_be_positive() -> None:
    with pytest.raises(ValueError, match="positive"):
        NDJSONDecoder(max_line_bytes=0)


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_deep_nesting_is_a_bad_line_not_a_crash() -> None:
    body = b'{"a": ' + b"[" * 100_000 + b"]" * 100_000 + b"}\n"
    items = decode([body])
    assert len(items) == 1
    assert isinstance(items[0], StreamDecodeError)


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_a_2_gb_line_stops_at_max_line_bytes_with_bounded_memory() -> None:
    """A line that never ends, in 64 KiB chunks: the decoder stops at the limit, having held
    about the limit once (the pending line grows in one buffer, never copied per chunk)."""
    decoder = NDJSONDecoder()
    piece = b"x" * (64 * 1024)
    consumed = 0

    def run() -> StreamDecodeError | None:
        nonlocal consumed
        try:
            decoder.feed(b'{"a": "')
            for _ in range(2 * 10**9 // len(piece)):
                consumed += len(piece)
                decoder.feed(piece)
        except StreamDecodeError as exc:
            return exc
        return None

    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base, _ = tracemalloc.get_traced_memory()
        error = run()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert error is not None
    assert error.offset == decoder.max_line_bytes
    assert consumed <= decoder.max_line_bytes + len(piece)
    # bytearray over-allocates by about an eighth as it grows
    assert peak - base <= decoder.max_line_bytes * 5 // 4 + 4 * len(piece) + 1024 * 1024


# -- any bytes, any chunking ------------------------------------------------------------------

_pieces = st.lists(
    st.sampled_from(
        [
            b'{"a": 1}',
            b"[1]",
            b"\n",
            b"\r\n",
            b" ",
            b'{"s": "\\ud800"}',
            b'{"b": "\xc3',
            b'\xa9"}',
            b'{"n": NaN}',
            b"x",
        ]
    )
    | st.binary(max_size=6),
    max_size=14,
)


def outcome(chunks: list[bytes], limit: int) -> tuple[list[object], int | None]:
    """The items (errors as offset and message) and the offset of a raised error, if any."""
    decoder = NDJSONDecoder(max_line_bytes=limit)
    items: list[NDJSONItem] = []
    try:
        for chunk in chunks:
            items += decoder.feed(chunk)
        items += decoder.close()
    except StreamDecodeError as exc:
        return [], exc.offset  # the items of the failing chunk are lost with the error
    return shown(items), None


def _refuse(constant: str) -> None:
    raise ValueError(constant)


def naive(body: bytes) -> list[object]:
    """An independent reading: split at every LF, skip blank lines, json.loads the rest."""
    out: list[object] = []
    start = 0
    for raw in body.split(b"\n"):
        if raw.strip(b" \t\r"):
            try:
                value = json.loads(raw.decode("utf-8", "replace"), parse_constant=_refuse)
                ok = isinstance(value, dict)
                json.dumps(value, ensure_ascii=False).encode("utf-8")  # lone surrogates
            except (ValueError, UnicodeEncodeError):
                ok = False
            out.append(value if ok else start)
        start += len(raw) + 1
    return out


@per_pass(200)
@given(pieces=_pieces, data=st.data())
def test_any_bytes_in_any_chunking(pieces: list[bytes], data: st.DataObject) -> None:
    body = b"".join(pieces)
    cuts = data.draw(st.lists(st.integers(0, len(body)), max_size=10))
    whole = outcome([body], 16 * 1024 * 1024)
    assert outcome(split(body, cuts), 16 * 1024 * 1024) == whole
    assert outcome(byte_by_byte(body), 16 * 1024 * 1024) == whole
    items, raised = whole
    assert raised is None
    assert [i[0] if isinstance(i, tuple) else i for i in items] == naive(body)
    # With a limit small enough to be hit, whether and where it is hit is the same too.
    limit = data.draw(st.integers(1, 12))
    assert outcome(split(body, cuts), limit)[1] == outcome([body], limit)[1]

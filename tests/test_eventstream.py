"""``EventStreamDecoder``: AWS event-stream frames in any chunking, against botocore's decoder.

botocore's own ``EventStreamBuffer`` (what boto3 uses for Bedrock streams) is the reference:
hypothesis builds frames with every header value type, the two decoders read them, cut at
random, and must agree. Hostile inputs (a flipped byte anywhere, a cut frame, impossible or
huge declared lengths, bad headers) must each be a ``StreamDecodeError`` at the right offset.
"""

from __future__ import annotations

import struct
import tracemalloc
import uuid
import zlib
from typing import Any

import pytest
from botocore.eventstream import EventStreamBuffer
from hypothesis import given
from hypothesis import strategies as st

from chunks import byte_by_byte, split
from strategies import per_pass
from toolstitch.decode.eventstream import (
    DEFAULT_MAX_FRAME_BYTES,
    DEFAULT_MAX_HEADER_BYTES,
    EventStreamDecoder,
    EventStreamFrame,
    is_prelude,
)
from toolstitch.testing._eventstream import (
    BYTE,
    BYTES,
    FALSE,
    INT,
    LONG,
    SHORT,
    STRING,
    TIMESTAMP,
    TRUE,
    UUID,
    frame,
    header,
)
from toolstitch.vocab.errors import StreamDecodeError

# -- helpers ----------------------------------------------------------------------------------


def decode(pieces: list[bytes], **limits: int) -> list[EventStreamFrame]:
    decoder = EventStreamDecoder(**limits)
    out = [f for piece in pieces for f in decoder.feed(piece)]
    return out + decoder.close()


def failure(pieces: list[bytes], **limits: int) -> StreamDecodeError:
    with pytest.raises(StreamDecodeError) as caught:
        decode(pieces, **limits)
    return caught.value


def reference(body: bytes) -> list[tuple[dict[str, Any], bytes]]:
    """What botocore decodes from ``body``."""
    buffer = EventStreamBuffer()
    buffer.add_data(body)
    return [(dict(message.headers), message.payload) for message in buffer]


def ours(frames: list[EventStreamFrame]) -> list[tuple[dict[str, Any], bytes]]:
    """Our frames in botocore's terms (it gives a UUID as its 16 bytes)."""
    return [
        ({k: v.bytes if isinstance(v, uuid.UUID) else v for k, v in f.headers.items()}, f.payload)
        for f in frames
    ]


ONE = frame({":event-type": "messageStart", ":message-type": "event"}, b'{"role":"assistant"}')

# -- differential: botocore's decoder as the reference ----------------------------------------

_VALUES: dict[int, st.SearchStrategy[Any]] = {
    TRUE: st.none(),
    FALSE: st.none(),
    BYTE: st.integers(-(2**7), 2**7 - 1),
    SHORT: st.integers(-(2**15), 2**15 - 1),
    INT: st.integers(-(2**31), 2**31 - 1),
    LONG: st.integers(-(2**63), 2**63 - 1),
    BYTES: st.binary(max_size=40),
    STRING: st.text(max_size=20),
    TIMESTAMP: st.integers(-(2**63), 2**63 - 1),
    UUID: st.binary(min_size=16, max_size=16),
}
_HEADER = st.integers(0, 9).flatmap(
    lambda kind: st.tuples(st.just(kind), _VALUES[kind]),
)


@st.composite
def frames(draw: st.DrawFn) -> bytes:
    names = draw(st.lists(st.text(min_size=1, max_size=12), max_size=6, unique=True))
    raw = b""
    for name in names:
        kind, value = draw(_HEADER)
        if len(name.encode()) > 255:
            continue
        raw += header(name, kind, value)
    return frame(raw, draw(st.binary(max_size=200)))


@per_pass(150)
@given(st.lists(frames(), max_size=6), st.lists(st.integers(0, 3000), max_size=12))
def test_frames_match_botocore_in_any_chunking(bodies: list[bytes], cuts: list[int]) -> None:
    body = b"".join(bodies)
    got = decode(split(body, [c for c in cuts if c <= len(body)]))
    assert ours(got) == reference(body)
    offsets = [sum(len(b) for b in bodies[:n]) for n in range(len(bodies))]
    assert [f.offset for f in got] == offsets


@per_pass(30)
@given(st.lists(frames(), min_size=1, max_size=3))
def test_frames_byte_by_byte(bodies: list[bytes]) -> None:
    body = b"".join(bodies)
    assert ours(decode(byte_by_byte(body))) == reference(body)


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_every_value_type_decodes_to_its_python_value() -> None:
    ident = uuid.UUID("12345678-1234-5678-1234-567812345678")
    raw = b"".join(
        [
            header("t", TRUE),
            header("f", FALSE),
            header("b", BYTE, -2),
            header("s", SHORT, -300),
            header("i", INT, 70000),
            header("l", LONG, -(2**40)),
            header("y", BYTES, b"\x00\xff"),
            header("u", STRING, "é"),
            header("ts", TIMESTAMP, 1767225600000),
            header("id", UUID, ident),
        ]
    )
    (got,) = decode([frame(raw, b"{}")])
    assert got.headers == {
        "t": True,
        "f": False,
        "b": -2,
        "s": -300,
        "i": 70000,
        "l": -(2**40),
        "y": b"\x00\xff",
        "u": "é",
        "ts": 1767225600000,
        "id": ident,
    }
    assert got.payload == b"{}"
    assert got.offset == 0


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_a_frame_with_no_headers_and_no_payload() -> None:
    (got,) = decode([frame(b"", b"")])
    assert (got.headers, got.payload) == ({}, b"")


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_a_large_frame_one_byte_at_a_time() -> None:
    # Linear cost: a quadratic buffer would copy ~ (256 KiB)^2 / 2 bytes here.
    body = frame({":event-type": "x"}, b"a" * (256 * 1024))
    (got,) = decode(byte_by_byte(body))
    assert len(got.payload) == 256 * 1024


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_is_prelude() -> None:
    assert is_prelude(ONE)
    assert not is_prelude(ONE[:11])
    assert not is_prelude(b'data: {"a": 1}\n\n')
    lengths = struct.pack(">II", 15, 0)  # shorter than a frame can be
    assert not is_prelude(lengths + struct.pack(">I", zlib.crc32(lengths)))


# -- hostile input ----------------------------------------------------------------------------


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
@pytest.mark.parametrize("position", range(len(ONE)))
def test_any_flipped_byte_is_an_error_at_its_field(position: int) -> None:
    body = bytearray(ONE + ONE)
    body[len(ONE) + position] ^= 0x41
    error = failure([bytes(body)])
    if position < 12:
        assert "prelude CRC32" in error.message
        assert error.offset == len(ONE) + 8
    else:
        assert "message CRC32" in error.message
        assert error.offset == len(ONE) + len(ONE) - 4


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
@pytest.mark.parametrize("cut", [1, 11, 12, 13, len(ONE) - 1])
def test_a_frame_cut_at_close(cut: int) -> None:
    body = ONE + ONE[:cut]
    for pieces in ([body], byte_by_byte(body)):
        error = failure(pieces)
        assert error.offset == len(ONE)
        assert "ends inside a frame" in error.message


def _prelude(total: int, headers: int) -> bytes:
    lengths = struct.pack(">II", total, headers)
    return lengths + struct.pack(">I", zlib.crc32(lengths))


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_impossible_lengths() -> None:
    error = failure([ONE + _prelude(20, 8)])  # 8 bytes of headers leave -4 for the payload
    assert error.offset == len(ONE)
    assert "impossible lengths" in error.message


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_a_huge_declared_length_fails_at_once_without_buffering() -> None:
    decoder = EventStreamDecoder()
    with pytest.raises(StreamDecodeError) as caught:
        decoder.feed(_prelude(2**32 - 1, 0))
    assert caught.value.offset == 0
    assert f"max_frame_bytes={DEFAULT_MAX_FRAME_BYTES}" in caught.value.message


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_a_huge_allowed_frame_holds_only_what_arrived() -> None:
    decoder = EventStreamDecoder(max_frame_bytes=2**32 - 1)
    tracemalloc.start()
    try:
        assert decoder.feed(_prelude(2**32 - 1, 0)) == []
        chunk = b"x" * 65536
        for _ in range(16):  # 1 MiB of a declared 4 GiB frame
            assert decoder.feed(chunk) == []
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 3 * 1024 * 1024


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_header_section_limit() -> None:
    big = frame({"x": "y" * 100}, b"")
    assert decode([big], max_header_bytes=200)
    error = failure([ONE + big], max_header_bytes=50)
    assert error.offset == len(ONE) + 4
    assert "max_header_bytes=50" in error.message
    assert DEFAULT_MAX_HEADER_BYTES == 128 * 1024


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_frame_limit() -> None:
    error = failure([ONE, ONE], max_frame_bytes=len(ONE) - 1)
    assert error.offset == 0


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
@pytest.mark.parametrize(
    ("raw", "what"),
    [
        (b"\x00\x07", "name length of 0"),
        (b"\x05ab", "past the section"),
        (b"\x01a\x0a", "unknown value type 10"),
        (b"\x01a\x04\x00\x01", "cut by the end"),
        (b"\x01a\x09" + b"\x00" * 15, "UUID value cut"),
        (b"\x01a\x07\x00", "value length cut"),
        (b"\x01a\x07\x00\x05ab", "past the end of the section"),
        (b"\x01a\x07\x00\x01\xff", "not UTF-8"),
        (b"\x01\xff\x00", "name that is not UTF-8"),
    ],
)
def test_bad_headers(raw: bytes, what: str) -> None:
    good = header(":event-type", STRING, "x")
    error = failure([ONE + frame(good + raw, b"{}")])
    assert what in error.message
    assert error.offset == len(ONE) + 12 + len(good)


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_a_repeated_header_name() -> None:
    raw = header("a", STRING, "x") + header("a", TRUE)
    error = failure([frame(raw, b"")])
    assert "second 'a' header" in error.message
    assert error.offset == 12 + len(header("a", STRING, "x"))


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_dead_after_an_error_and_closed_after_close() -> None:
    decoder = EventStreamDecoder()
    bad = bytearray(ONE)
    bad[-1] ^= 1
    with pytest.raises(StreamDecodeError) as first:
        decoder.feed(bytes(bad))
    for _ in range(2):
        with pytest.raises(StreamDecodeError) as caught:
            decoder.feed(ONE)
        assert caught.value == first.value
        with pytest.raises(StreamDecodeError) as caught:
            decoder.close()
        assert caught.value == first.value
    closed = EventStreamDecoder()
    assert closed.close() == []
    assert closed.close() == []
    with pytest.raises(RuntimeError):
        closed.feed(ONE)


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_limits_must_be_possible() -> None:
    with pytest.raises(ValueError, match="max_frame_bytes"):
        EventStreamDecoder(max_frame_bytes=15)
    with pytest.raises(ValueError, match="max_header_bytes"):
        EventStreamDecoder(max_header_bytes=-1)
